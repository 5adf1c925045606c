// ChatEventAssembler driven with K3 output text cut at its special tokens (no model): the
// events, the finish reason (tool_calls when the output holds a call, length wins), the
// reasoning-token count, text released late together with a special token, and completions.
#include "serving/chat_event_assembler.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kimi::serving {
namespace {

struct Assembled {
  std::vector<ChatEvent> events;
  ParsedOutput output;
  ChatEvent finish;
  bool finished = false;
};

bool IsK3Special(int32_t id) {
  const SpecialTokenIds ids = SpecialTokenIds::K3();
  return id == ids.eos || id == ids.end_of_message || id == ids.open || id == ids.close || id == ids.sep;
}

Assembled Drive(std::string_view text, OutputStart start, FinishReason reason, bool with_parser = true) {
  std::unique_ptr<OutputParser> parser;
  if (with_parser) {
    auto created = OutputParserRegistry::Create("kimi_k3", {SpecialTokenIds::K3(), start});
    EXPECT_TRUE(created.ok());
    parser = std::move(created).value();
  }
  ChatEventAssembler assembler(std::move(parser), IsK3Special, start == OutputStart::kThinkChannel,
                               /*prompt_tokens=*/42);
  std::deque<ChatEvent> queue;
  const std::vector<OwnedToken> tokens = SplitAtSpecialTokens(text, SpecialTokenIds::K3(), /*max_piece_bytes=*/3);
  for (const OwnedToken& t : tokens) {
    // Special tokens carry no text from the service's detokeniser.
    assembler.OnToken(t.id < 0 ? 7 : t.id, t.id < 0 ? t.text : "", &queue);
  }
  assembler.OnFinish(reason, int64_t(tokens.size()), &queue);
  Assembled run;
  for (ChatEvent& e : queue) {
    if (e.kind == ChatEvent::Kind::kOutput) FoldEvent(e.output, &run.output);
    if (e.kind == ChatEvent::Kind::kFinish) {
      run.finish = e;
      run.finished = true;
    }
    run.events.push_back(std::move(e));
  }
  return run;
}

const char kThinkThenCall[] =
    "let me see<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>"
    "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|>"
    "<|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|>"
    "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>";

TEST(ChatEventAssemblerTest, ThinkingAnswerAndToolCallEndWithToolCalls) {
  Assembled run = Drive(kThinkThenCall, OutputStart::kThinkChannel, FinishReason::kStop);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(run.output.reasoning, "let me see");
  EXPECT_EQ(run.output.answer, "Checking.");
  ASSERT_EQ(run.output.tool_calls.size(), 1u);
  EXPECT_EQ(run.output.tool_calls[0].name, "get_weather");
  EXPECT_EQ(run.output.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(run.finish.finish_reason, "tool_calls");
  EXPECT_EQ(run.finish.usage.prompt_tokens, 42);
  EXPECT_EQ(run.events.back().kind, ChatEvent::Kind::kFinish);
  // "let me see" in 3-byte pieces (4 tokens) and the <|close|> after it.
  EXPECT_EQ(run.finish.usage.reasoning_tokens, 5);
}

TEST(ChatEventAssemblerTest, EveryTokenIsCountedOnceOnTheFirstEventAfterIt) {
  Assembled run = Drive(kThinkThenCall, OutputStart::kThinkChannel, FinishReason::kStop);
  const int64_t fed = run.finish.usage.completion_tokens;  // Drive reports the tokens it fed
  int64_t counted = 0;
  for (const ChatEvent& e : run.events) counted += e.tokens;
  EXPECT_EQ(counted, fed);
  // The first reasoning piece came from the first token; the markup tokens before the answer
  // released nothing, so the answer's first event counts them too.
  ASSERT_EQ(run.events.front().output.kind, OutputEventKind::kReasoning);
  EXPECT_EQ(run.events.front().tokens, 1);
  auto answer = std::find_if(run.events.begin(), run.events.end(), [](const ChatEvent& e) {
    return e.kind == ChatEvent::Kind::kOutput && e.output.kind == OutputEventKind::kAnswer;
  });
  ASSERT_NE(answer, run.events.end());
  EXPECT_GT(answer->tokens, 1);
  // <|end_of_msg|> and the closing markup released no output: the finish counts them.
  EXPECT_GE(run.finish.tokens, 1);
}

TEST(ChatEventAssemblerTest, LengthWinsOverAToolCall) {
  Assembled run = Drive(kThinkThenCall, OutputStart::kThinkChannel, FinishReason::kLength);
  EXPECT_EQ(run.finish.finish_reason, "length");
}

TEST(ChatEventAssemblerTest, PlainAnswerStops) {
  Assembled run = Drive("Hello there.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>",
                  OutputStart::kResponseChannel, FinishReason::kStop);
  EXPECT_EQ(run.output.answer, "Hello there.");
  EXPECT_EQ(run.finish.finish_reason, "stop");
  EXPECT_EQ(run.finish.usage.reasoning_tokens, 0);
}

TEST(ChatEventAssemblerTest, CancelledEndsWithoutAFinish) {
  Assembled run = Drive("Hello", OutputStart::kResponseChannel, FinishReason::kCancelled);
  EXPECT_FALSE(run.finished);
}

TEST(ChatEventAssemblerTest, TextReleasedWithASpecialTokenGoesFirst) {
  auto parser = OutputParserRegistry::Create("kimi_k3", {SpecialTokenIds::K3(), OutputStart::kThinkChannel});
  ASSERT_TRUE(parser.ok());
  ChatEventAssembler assembler(std::move(parser).value(), IsK3Special, true, 1);
  std::deque<ChatEvent> queue;
  assembler.OnToken(7, "", &queue);  // held back by the runtime (a possible stop string)
  assembler.OnToken(SpecialTokenIds::K3().close, "almost", &queue);
  ASSERT_FALSE(queue.empty());
  EXPECT_EQ(queue.front().output.kind, OutputEventKind::kReasoning);
  EXPECT_EQ(queue.front().output.text, "almost");
}

TEST(ChatEventAssemblerTest, CompletionsAreAnswerTextOnly) {
  Assembled run = Drive("raw <|open|> text", OutputStart::kResponseChannel, FinishReason::kLength, /*with_parser=*/false);
  for (const ChatEvent& e : run.events) {
    if (e.kind == ChatEvent::Kind::kOutput) {
      EXPECT_EQ(e.output.kind, OutputEventKind::kAnswer);
    }
  }
  EXPECT_EQ(run.output.answer, "raw  text");
  EXPECT_EQ(run.finish.finish_reason, "length");
}

// Each ordinary token's logprob entry rides on the answer text it produced: joined, the
// entries' bytes spell the answer; reasoning, tool-call and special tokens have none.
TEST(ChatEventAssemblerTest, LogprobsFollowTheAnswerTokens) {
  auto created = OutputParserRegistry::Create("kimi_k3", {SpecialTokenIds::K3(), OutputStart::kThinkChannel});
  ASSERT_TRUE(created.ok());
  ChatEventAssembler assembler(std::move(created).value(), IsK3Special, true, /*prompt_tokens=*/1);
  const std::vector<OwnedToken> tokens =
      SplitAtSpecialTokens(kThinkThenCall, SpecialTokenIds::K3(), /*max_piece_bytes=*/3);
  std::vector<std::string> bytes_of_id;
  assembler.ReportLogprobs([&bytes_of_id](int32_t id) { return bytes_of_id.at(size_t(id)); });
  std::deque<ChatEvent> queue;
  for (const OwnedToken& t : tokens) {
    const int32_t id = t.id < 0 ? int32_t(bytes_of_id.size()) : t.id;
    if (t.id < 0) bytes_of_id.push_back(t.text);
    SampledToken sampled{id, -0.5f, {TokenLogprob{id, -0.5f}}};
    assembler.OnToken(id, t.id < 0 ? t.text : "", &queue, &sampled);
  }
  assembler.OnFinish(FinishReason::kStop, int64_t(tokens.size()), &queue);
  std::string answer, spelled;
  for (const ChatEvent& e : queue) {
    if (e.kind != ChatEvent::Kind::kOutput) continue;
    if (e.output.kind != OutputEventKind::kAnswer) {
      EXPECT_TRUE(e.logprobs.empty()) << "only answer text has logprobs";
      continue;
    }
    answer += e.output.text;
    for (const TokenLogprobs& t : e.logprobs) {
      spelled += t.bytes;
      EXPECT_FLOAT_EQ(t.logprob, -0.5f);
      ASSERT_EQ(t.top.size(), 1u);
      EXPECT_EQ(t.top[0].bytes, t.bytes);
    }
  }
  EXPECT_EQ(answer, "Checking.");
  EXPECT_EQ(spelled, answer);
}

}  // namespace
}  // namespace kimi::serving
