// The renderer's work on long tool runs: tens of thousands of tool calls and results render as
// the template writes them, with work linear in the input. Work is counted as heap allocations
// (tests/support/heap_allocations.h), not timed: matching a result to its call by building both
// ids' text per comparison, as the renderer once did, allocates twice per comparison for ids
// longer than the short-string buffer (real call ids are 20 to 40 bytes), so 20,000 calls and
// 20,000 results cost 0.4 to 2 billion allocations there and about 260,000 with the ids indexed
// once.
#include <string>

#include <gtest/gtest.h>

#include "heap_allocations.h"
#include "kimi/chat_format.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kCalls = 20000;
// Allocations per call or result the renderer may make: a call writes its tag and attributes,
// a result its tag, index and the lookup of its id. Tens, whatever the count.
constexpr uint64_t kAllocationsPerItem = 64;

std::string CallId(size_t i) {
  std::string digits = std::to_string(i);
  return "call_" + std::string(24 - digits.size(), '0') + digits;  // 29 bytes: on the heap
}

Json Call(size_t i) {
  return {{"id", CallId(i)}, {"type", "function"}, {"function", {{"name", "f" + std::to_string(i)}, {"arguments", "{}"}}}};
}

Json ToolResult(const std::string& id, const std::string& content) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}

Json Assistant(size_t calls) {
  Json tool_calls = Json::array();
  for (size_t i = 0; i < calls; ++i) tool_calls.push_back(Call(i));
  return {{"role", "assistant"}, {"content", ""}, {"tool_calls", std::move(tool_calls)}};
}

// The template's tool message (docs/chat-format.md, "Tool results").
std::string ToolMessageText(const std::string& tool, size_t index, const std::string& content) {
  return "<|open|>message role=\"tool\" tool=\"" + tool + "\" index=\"" + std::to_string(index) + "\"<|sep|>" + content +
         "<|close|>message<|sep|><|end_of_msg|>";
}

constexpr std::string_view kGenerationPrompt = "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>";

Json Body(Json messages) { return {{"messages", std::move(messages)}, {"thinking", false}}; }

// What the renderer writes for `messages` before any tool message (no generation prompt).
std::string Prefix(Json messages) {
  Json body = Body(std::move(messages));
  body["add_generation_prompt"] = false;
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  EXPECT_TRUE(prompt.ok()) << prompt.status().ToString();
  return prompt.ok() ? prompt->text : "";
}

// Renders `messages` and requires `expected` (the generation prompt appended) within
// kAllocationsPerItem allocations per message or call; the request is read before counting.
void ExpectRendersWithLinearWork(const Json& messages, std::string expected, size_t items) {
  Result<ChatRequest> request = ParseChatRequest(Body(messages));
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  const uint64_t before = kimi::testing::HeapAllocations();
  Result<RenderedPrompt> prompt = ChatFormat::Render(*request);
  const uint64_t allocations = kimi::testing::HeapAllocations() - before;
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  expected += kGenerationPrompt;
  EXPECT_EQ(prompt->text, expected);
  EXPECT_LT(allocations, kAllocationsPerItem * items);
}

// Results given in reverse call order come out in call order, each named by its call.
std::string ReorderedExpected(size_t calls, std::string prefix) {
  std::string expected = std::move(prefix);
  for (size_t i = 0; i < calls; ++i) {
    expected += ToolMessageText("f" + std::to_string(i), i + 1, "r" + std::to_string(i));
  }
  return expected;
}

Json ReorderedMessages(size_t calls) {
  Json messages = Json::array({{{"role", "user"}, {"content", "go"}}, Assistant(calls)});
  for (size_t i = calls; i-- > 0;) messages.push_back(ToolResult(CallId(i), "r" + std::to_string(i)));
  return messages;
}

Json FirstMessages(const Json& messages, size_t n) {
  Json out = Json::array();
  for (size_t i = 0; i < n; ++i) out.push_back(messages[i]);
  return out;
}

TEST(ChatFormatWork, SmallReferenceOfReorderedResults) {
  // The shape the scale tests check, spelled out for three calls (the golden case
  // parallel_calls_results_reordered renders two the same way).
  const Json messages = ReorderedMessages(3);
  Result<RenderedPrompt> prompt = ChatFormat::Render(Body(messages));
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  const std::string tools_and_stub =
      "<|open|>message role=\"tool\" tool=\"f0\" index=\"1\"<|sep|>r0<|close|>message<|sep|><|end_of_msg|>"
      "<|open|>message role=\"tool\" tool=\"f1\" index=\"2\"<|sep|>r1<|close|>message<|sep|><|end_of_msg|>"
      "<|open|>message role=\"tool\" tool=\"f2\" index=\"3\"<|sep|>r2<|close|>message<|sep|><|end_of_msg|>"
      "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>";
  ASSERT_TRUE(prompt->text.ends_with(tools_and_stub)) << prompt->text;
  EXPECT_EQ(prompt->text, ReorderedExpected(3, Prefix(FirstMessages(messages, 2))) + std::string(kGenerationPrompt));
}

TEST(ChatFormatWork, TwentyThousandResultsInReverseOrderRenderInCallOrder) {
  const Json messages = ReorderedMessages(kCalls);
  ExpectRendersWithLinearWork(messages, ReorderedExpected(kCalls, Prefix(FirstMessages(messages, 2))), 2 * kCalls);
}

TEST(ChatFormatWork, TwentyThousandResultsOfOneCallKeepTheirOrder) {
  // The penetration test's shape: every result names the turn's last call.
  Json messages = Json::array({{{"role", "user"}, {"content", "go"}}, Assistant(kCalls)});
  std::string expected = Prefix(messages);
  const std::string last = "f" + std::to_string(kCalls - 1);
  for (size_t i = 0; i < kCalls; ++i) {
    messages.push_back(ToolResult(CallId(kCalls - 1), "r" + std::to_string(i)));
    expected += ToolMessageText(last, i + 1, "r" + std::to_string(i));
  }
  ExpectRendersWithLinearWork(messages, std::move(expected), 2 * kCalls);
}

TEST(ChatFormatWork, TwentyThousandRunsOfOneTurnMatchAgainstOneIndex) {
  // One result per run, runs split by user messages: each run looks its result up among the
  // same 20,000 calls.
  Json messages = Json::array({{{"role", "user"}, {"content", "go"}}, Assistant(kCalls)});
  std::string expected = Prefix(messages);
  for (size_t i = kCalls; i-- > 0;) {
    messages.push_back(ToolResult(CallId(i), "r" + std::to_string(i)));
    messages.push_back({{"role", "user"}, {"content", "u"}});
    expected += ToolMessageText("f" + std::to_string(i), kCalls - i, "r" + std::to_string(i));
    expected += "<|open|>message role=\"user\"<|sep|>u<|close|>message<|sep|><|end_of_msg|>";
  }
  ExpectRendersWithLinearWork(messages, std::move(expected), 3 * kCalls);
}

TEST(ChatFormatWork, OneUnknownIdKeepsTwentyThousandResultsInMessageOrder) {
  // A run with one result the turn does not know is written in message order, each result
  // taking the call at its position.
  Json messages = ReorderedMessages(kCalls);
  std::string expected = Prefix(FirstMessages(messages, 2));
  messages.back()["tool_call_id"] = "call_unknown_to_this_turn";
  for (size_t i = 0; i < kCalls; ++i) {
    expected += ToolMessageText("f" + std::to_string(i), i + 1, "r" + std::to_string(kCalls - 1 - i));
  }
  ExpectRendersWithLinearWork(messages, std::move(expected), 2 * kCalls);
}

}  // namespace
}  // namespace kimi
