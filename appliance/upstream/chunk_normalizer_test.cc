#include "upstream/chunk_normalizer.h"
#include "upstream/plain_chunk.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::upstream {
namespace {

using nlohmann::json;
using api::StreamEvent;
using api::StreamEventKind;

// One line per event: "R:text", "A:text", "B0:id:name", "G0:args", "E0", "F:reason:p/c/r".
std::string Describe(const StreamEvent& e) {
  switch (e.kind) {
    case StreamEventKind::kReasoning: return "R:" + e.text;
    case StreamEventKind::kAnswer: return "A:" + e.text;
    case StreamEventKind::kToolCallBegin:
      return "B" + std::to_string(e.tool_index) + ":" + e.tool_call_id + ":" + e.tool_name;
    case StreamEventKind::kToolCallArguments: return "G" + std::to_string(e.tool_index) + ":" + e.text;
    case StreamEventKind::kToolCallEnd: return "E" + std::to_string(e.tool_index);
    case StreamEventKind::kFinish:
      return "F:" + e.finish_reason + ":" + std::to_string(e.usage.prompt_tokens) + "/" +
             std::to_string(e.usage.completion_tokens) + "/" + std::to_string(e.usage.reasoning_tokens);
  }
  return "?";
}

json Delta(const json& delta, const std::string& finish = "") {
  return {{"object", "chat.completion.chunk"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish.empty() ? json(nullptr) : json(finish)}}}}};
}

json Usage(int prompt, int completion, int reasoning) {
  return {{"choices", json::array()},
          {"usage",
           {{"prompt_tokens", prompt},
            {"completion_tokens", completion},
            {"completion_tokens_details", {{"reasoning_tokens", reasoning}}}}}};
}

std::vector<std::string> NormalizeOneWay(const std::vector<json>& chunks, bool as_text, Status* finish_status) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  for (const json& c : chunks) {
    Status s = as_text ? n.ConsumeText(c.dump(), &events) : n.Consume(c, &events);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  Status s = n.Finish(&events);
  if (finish_status != nullptr) *finish_status = s;
  else EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> out;
  for (const StreamEvent& e : events) out.push_back(Describe(e));
  return out;
}

// Every case runs twice: from parsed chunks, and from their text (where plain chunks skip
// the JSON tree); both must give the same events.
std::vector<std::string> Normalize(const std::vector<json>& chunks, Status* finish_status = nullptr) {
  Status from_text;
  std::vector<std::string> out = NormalizeOneWay(chunks, /*as_text=*/false, finish_status);
  EXPECT_EQ(NormalizeOneWay(chunks, /*as_text=*/true, finish_status ? &from_text : nullptr), out);
  if (finish_status != nullptr) {
    EXPECT_EQ(from_text.code(), finish_status->code());
  }
  return out;
}

using Lines = std::vector<std::string>;

// nlohmann parses without recursion, but the normalizer dumps a call's arguments, and dump()
// recurses once per level: a chunk nested 200,000 levels deep crashed the daemon (SIGSEGV).
TEST(ChunkNormalizer, AnEventNestedTooDeeplyIsRefusedBeforeItIsParsed) {
  constexpr int kLevels = 200000;
  std::string nested;
  for (int i = 0; i < kLevels; ++i) nested += "{\"a\":";
  nested += "1" + std::string(kLevels, '}');
  const std::string call = R"({"index":0,"id":"c","type":"function","function":{"name":"f","arguments":)" + nested + "}}";
  const std::string usage_count = R"({"choices":[],"usage":{"prompt_tokens":)" + nested + "}}";
  for (const std::string& text :
       {R"({"choices":[{"index":0,"delta":{"tool_calls":[)" + call + "]}}]}", usage_count}) {
    ChunkNormalizer n;
    std::vector<StreamEvent> events;
    const Status s = n.ConsumeText(text, &events);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("nests deeper than"), std::string::npos) << s.ToString();
  }
}

// An upstream's token counts feed the key's quotas, budgets and audit record: a negative count
// (it refunded a key's daily quota), one past int64 (2^64 - 1 read as -1) or one no context holds
// is refused, in both ways a chunk is read.
TEST(ChunkNormalizer, ImpossibleTokenCountsAreRefused) {
  for (const json& count : {json(-1000000), json(18446744073709551615ull), json(int64_t{1} << 40), json(1.5),
                            json("12")}) {
    json chunk = Usage(1, 1, 0);
    chunk["usage"]["prompt_tokens"] = count;
    for (bool as_text : {false, true}) {
      ChunkNormalizer n;
      std::vector<StreamEvent> events;
      const Status s = as_text ? n.ConsumeText(chunk.dump(), &events) : n.Consume(chunk, &events);
      EXPECT_EQ(s.code(), Status::Code::kCorruption) << count.dump() << " " << s.ToString();
      EXPECT_NE(s.message().find("usage.prompt_tokens"), std::string::npos) << s.ToString();
    }
  }
  EXPECT_EQ(Normalize({Delta({{"content", "x"}}, "stop"), Usage(7, 3, 0)}).back(), "F:stop:7/3/0");
}

TEST(ChunkNormalizer, VllmReasoningFieldAndRoleFrame) {
  EXPECT_EQ(Normalize({Delta({{"role", "assistant"}, {"content", ""}}), Delta({{"reasoning", "think"}}),
                 Delta({{"reasoning_content", " more"}}), Delta({{"content", "Paris"}}), Delta(json::object(), "stop"),
                 Usage(36, 5, 2)}),
            (Lines{"R:think", "R: more", "A:Paris", "F:stop:36/5/2"}));
}

TEST(ChunkNormalizer, CombinedDeltaYieldsReasoningFirst) {
  // Field order in the object must not matter: content is written before reasoning here.
  json combined = {{"content", "answer"}, {"reasoning", "why"}};
  EXPECT_EQ(Normalize({Delta(combined, "stop")}), (Lines{"R:why", "A:answer", "F:stop:0/0/0"}));
}

TEST(ChunkNormalizer, BothReasoningFieldsWithTheSameTextAreEmittedOnce) {
  EXPECT_EQ(Normalize({Delta({{"reasoning", "x"}, {"reasoning_content", "x"}}, "stop")}), (Lines{"R:x", "F:stop:0/0/0"}));
}

TEST(ChunkNormalizer, IncrementalToolCallsAreRenumberedFromZero) {
  auto piece = [](int index, json fn, const std::string& id = "") {
    json call = {{"index", index}, {"function", fn}};
    if (!id.empty()) call["id"] = id, call["type"] = "function";
    return Delta({{"tool_calls", {call}}});
  };
  EXPECT_EQ(Normalize({Delta({{"content", "Let me check."}}), piece(3, {{"name", "get_weather"}, {"arguments", ""}}, "call_a"),
                 piece(3, {{"arguments", "{\"city\":"}}), piece(3, {{"arguments", "\"Paris\"}"}}),
                 piece(4, {{"name", "get_time"}, {"arguments", "{}"}}, "call_b"), Delta(json::object(), "tool_calls"),
                 Usage(10, 20, 0)}),
            (Lines{"A:Let me check.", "B0:call_a:get_weather", "G0:{\"city\":", "G0:\"Paris\"}", "E0",
                   "B1:call_b:get_time", "G1:{}", "E1", "F:tool_calls:10/20/0"}));
}

TEST(ChunkNormalizer, WholeToolCallsInOneDelta) {
  json calls = {{{"index", 0}, {"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{\"a\":1}"}}}},
                {{"index", 1}, {"id", "c2"}, {"type", "function"}, {"function", {{"name", "g"}, {"arguments", "{}"}}}}};
  EXPECT_EQ(Normalize({Delta({{"reasoning", "plan"}, {"tool_calls", calls}}, "stop")}),
            (Lines{"R:plan", "B0:c1:f", "G0:{\"a\":1}", "E0", "B1:c2:g", "G1:{}", "E1", "F:tool_calls:0/0/0"}));
}

TEST(ChunkNormalizer, WholeCallsWithoutIndexOrAllAtIndexZero) {
  json no_index = {{"id", "c1"}, {"function", {{"name", "f"}, {"arguments", {{"k", "v"}}}}}};
  json second_at_zero = {{"index", 0}, {"id", "c2"}, {"function", {{"name", "g"}, {"arguments", "{}"}}}};
  json first_at_zero = {{"index", 0}, {"id", "c0"}, {"function", {{"name", "h"}, {"arguments", "[]"}}}};
  EXPECT_EQ(Normalize({Delta({{"tool_calls", {first_at_zero}}}), Delta({{"tool_calls", {second_at_zero}}}),
                 Delta({{"tool_calls", {no_index}}}, "tool_calls")}),
            (Lines{"B0:c0:h", "G0:[]", "E0", "B1:c2:g", "G1:{}", "E1", "B2:c1:f", "G2:{\"k\":\"v\"}", "E2",
                   "F:tool_calls:0/0/0"}));
}

TEST(ChunkNormalizer, MissingCallIdIsGenerated) {
  json call = {{"index", 0}, {"function", {{"name", "f"}, {"arguments", "{}"}}}};
  EXPECT_EQ(Normalize({Delta({{"tool_calls", {call}}}, "tool_calls")}), (Lines{"B0:call_0:f", "G0:{}", "E0", "F:tool_calls:0/0/0"}));
}

TEST(ChunkNormalizer, LengthAndUnknownFinishReasons) {
  EXPECT_EQ(Normalize({Delta({{"content", "a"}}, "length")}), (Lines{"A:a", "F:length:0/0/0"}));
  EXPECT_EQ(Normalize({Delta({{"content", "a"}}, "eos")}), (Lines{"A:a", "F:stop:0/0/0"}));
}

TEST(ChunkNormalizer, WholeChatCompletionMessage) {
  json whole = {{"object", "chat.completion"},
                {"choices", {{{"index", 0},
                              {"message", {{"role", "assistant"}, {"reasoning_content", "r"}, {"content", "a"}}},
                              {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", 3}, {"completion_tokens", 4}}}};
  EXPECT_EQ(Normalize({whole}), (Lines{"R:r", "A:a", "F:stop:3/4/0"}));
}

TEST(ChunkNormalizer, CompletionsTextChoices) {
  json text = {{"object", "text_completion"}, {"choices", {{{"index", 0}, {"text", "once"}, {"finish_reason", nullptr}}}}};
  json end = {{"object", "text_completion"}, {"choices", {{{"index", 0}, {"text", ""}, {"finish_reason", "length"}}}}};
  EXPECT_EQ(Normalize({text, end, Usage(2, 1, 0)}), (Lines{"A:once", "F:length:2/1/0"}));
}

TEST(ChunkNormalizer, StreamWithoutFinishReasonIsAnError) {
  Status s;
  Normalize({Delta({{"content", "cut"}})}, &s);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
}

TEST(ChunkNormalizer, MalformedChunksAreErrors) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  EXPECT_EQ(n.Consume(json::array(), &events).code(), Status::Code::kCorruption);
  EXPECT_EQ(n.Consume({{"choices", "x"}}, &events).code(), Status::Code::kCorruption);
  json second_choice = {{"choices", {{{"index", 1}, {"delta", {{"content", "x"}}}}}}};
  EXPECT_EQ(n.Consume(second_choice, &events).code(), Status::Code::kCorruption);
  json nameless = {{"index", 0}, {"function", {{"arguments", "{}"}}}};
  EXPECT_EQ(n.Consume(Delta({{"tool_calls", {nameless}}}), &events).code(), Status::Code::kCorruption);
}

TEST(ChunkNormalizer, InterleavedToolCallsAreAnError) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  ASSERT_TRUE(n.Consume(Delta({{"tool_calls", {{{"index", 0}, {"id", "a"}, {"function", {{"name", "f"}}}}}}}), &events).ok());
  ASSERT_TRUE(n.Consume(Delta({{"tool_calls", {{{"index", 1}, {"id", "b"}, {"function", {{"name", "g"}}}}}}}), &events).ok());
  Status s = n.Consume(Delta({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{}"}}}}}}}), &events);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
}

TEST(ChunkNormalizer, InStreamErrorObject) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  Status s = n.Consume({{"error", {{"message", "engine died"}, {"code", 500}}}}, &events);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_NE(s.message().find("engine died"), std::string::npos);
}

// vLLM's logprobs (chat content[] and the legacy completions object) reach the answer event
// of the same chunk; a reasoning chunk's logprobs are dropped; malformed ones are an error.
TEST(ChunkNormalizer, LogprobsAttachToTheAnswerOfTheirChunk) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  json reasoning = Delta({{"reasoning", "hm"}});
  reasoning["choices"][0]["logprobs"] = {{"content", {{{"token", "hm"}, {"logprob", -0.1}}}}};
  json answer = Delta({{"content", "Hi"}});
  answer["choices"][0]["logprobs"] = {
      {"content", {{{"token", "Hi"}, {"logprob", -0.5}, {"bytes", {72, 105}},
                    {"top_logprobs", {{{"token", "Hi"}, {"logprob", -0.5}}, {{"token", "Yo"}, {"logprob", -2.0}}}}}}}};
  ASSERT_TRUE(n.Consume(reasoning, &events).ok());
  ASSERT_TRUE(n.Consume(answer, &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].logprobs.empty());
  ASSERT_EQ(events[1].logprobs.size(), 1u);
  EXPECT_EQ(events[1].logprobs[0].bytes, "Hi");
  ASSERT_EQ(events[1].logprobs[0].top.size(), 2u);
  EXPECT_EQ(events[1].logprobs[0].top[1].bytes, "Yo");

  json legacy = {{"choices", {{{"index", 0}, {"text", "ok"}, {"finish_reason", nullptr},
                               {"logprobs", {{"tokens", {"o", "k"}}, {"token_logprobs", {-1.0, -2.0}},
                                             {"top_logprobs", {{{"o", -1.0}}, {{"k", -2.0}}}},
                                             {"text_offset", {0, 1}}}}}}}};
  ASSERT_TRUE(n.Consume(legacy, &events).ok());
  ASSERT_EQ(events.back().logprobs.size(), 2u);
  EXPECT_EQ(events.back().logprobs[1].bytes, "k");

  json broken = Delta({{"content", "x"}});
  broken["choices"][0]["logprobs"] = {{"content", {{{"token", "x"}}}}};
  EXPECT_EQ(n.Consume(broken, &events).code(), Status::Code::kCorruption);
}

// The shortcut takes the frames a worker sends per token, and declines every chunk that
// carries more than text (which then takes the full reader).
TEST(PlainChunk, TakesTextDeltasAndDeclinesTheRest) {
  PlainChunk plain;
  ASSERT_TRUE(ReadPlainChunk(R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m",)"
                             R"("choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"x\" \u00e9"},)"
                             R"("logprobs":null,"finish_reason":null}],"usage":null})",
                             &plain));
  EXPECT_TRUE(plain.has_choice);
  EXPECT_EQ(plain.content, "Hi \"x\" \u00e9");
  ASSERT_TRUE(ReadPlainChunk(R"({"choices":[{"delta":{"reasoning":"r","content":null},"finish_reason":"length"}]})", &plain));
  EXPECT_EQ(plain.reasoning, "r");
  EXPECT_EQ(plain.finish_reason, "length");
  for (const char* declined : {
           R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]})",
           R"({"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[]}}]})",
           R"({"choices":[],"usage":{"prompt_tokens":1}})",
           R"({"choices":[{"index":1,"delta":{"content":"x"}}]})",
           R"({"choices":[{"index":0,"delta":{}},{"index":0,"delta":{}}]})",
           R"({"choices":[{"index":0,"message":{"content":"x"}}]})",
           R"({"choices":[{"index":0,"text":"x"}]})",
           R"({"choices":[{"index":0}]})",
           R"({"choices":[{"index":0,"delta":{"content":7}}]})",
           R"({"error":{"message":"m"}})",
           R"({"object":"error","message":"m"})",
           R"({"choices":"x"})",
           R"([1])",
           R"({"choices":[{"index":0,"delta":{"content":"x"}}]} trailing)",
       }) {
    EXPECT_FALSE(ReadPlainChunk(declined, &plain)) << declined;
  }
}

TEST(ChunkNormalizer, TextThatIsNotJsonIsAnError) {
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  EXPECT_EQ(n.ConsumeText("{\"choices\":[", &events).code(), Status::Code::kCorruption);
  EXPECT_EQ(n.ConsumeText(R"({"error":{"message":"engine died","code":500}})", &events).code(),
            Status::Code::kUnavailable);
}

TEST(ChunkNormalizer, NothingButTheSameFinishMayFollowTheFinish) {
  for (const char* late : {R"({"choices":[{"index":0,"delta":{"content":"more"}}]})",
                           R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})",
                           R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]})",
                           R"({"choices":[{"index":0,"text":"more"}]})"}) {
    ChunkNormalizer n;
    std::vector<StreamEvent> events;
    ASSERT_TRUE(n.ConsumeText(R"({"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]})", &events).ok());
    EXPECT_EQ(n.ConsumeText(late, &events).code(), Status::Code::kCorruption) << late;
  }
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  ASSERT_TRUE(n.ConsumeText(R"({"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]})", &events).ok());
  EXPECT_TRUE(n.ConsumeText(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", &events).ok());
  EXPECT_TRUE(n.ConsumeText(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})", &events).ok());
  ASSERT_TRUE(n.Finish(&events).ok());
  EXPECT_EQ(events.back().finish_reason, "stop");
}

TEST(ChunkNormalizer, ToolCallIndicesAreSmallAndNonNegative) {
  for (const char* index : {"-1", "18446744073709551615", "1024", "1.5", "\"0\""}) {
    ChunkNormalizer n;
    std::vector<StreamEvent> events;
    const std::string chunk = std::string(R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":)") + index +
                              R"(,"function":{"name":"alpha","arguments":"{}"}}]}}]})";
    EXPECT_EQ(n.ConsumeText(chunk, &events).code(), Status::Code::kCorruption) << index;
  }
  ChunkNormalizer n;
  std::vector<StreamEvent> events;
  json calls = json::array();
  for (int i = 0; i < 1025; ++i) calls.push_back({{"function", {{"name", "f"}}}});
  EXPECT_EQ(n.Consume(json{{"choices", {{{"index", 0}, {"delta", {{"tool_calls", calls}}}}}}}, &events).code(),
            Status::Code::kCorruption);
}

TEST(UpstreamErrorStatus, MapsStatusAndKeepsMessage) {
  json openai = {{"error", {{"message", "max_tokens is too large"}, {"type", "invalid_request_error"}}}};
  Status bad = UpstreamErrorStatus(openai, 400, "w");
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bad.message(), "max_tokens is too large");
  EXPECT_EQ(UpstreamErrorStatus(openai, 422, "w").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(UpstreamErrorStatus(json::object(), 429, "w").code(), Status::Code::kResourceExhausted);
  // Refusals of the appliance itself: the upstream's fault (or its configuration's), never
  // the client's, and its words (which may quote the appliance's credential) stay in the log.
  json vllm_flat = {{"object", "error"}, {"message", "Incorrect API key sk-upstream-1234"}, {"code", 401}};
  for (int status : {401, 403, 404, 405, 407}) {
    Status refused = UpstreamErrorStatus(vllm_flat, status, "w");
    EXPECT_EQ(refused.code(), Status::Code::kBadGateway) << status;
    EXPECT_EQ(refused.message().find("sk-upstream"), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find(std::to_string(status)), std::string::npos) << refused.message();
  }
  // Inside a stream the generation failed there, whatever code the event carries.
  EXPECT_EQ(UpstreamErrorStatus(json{{"error", {{"message", "bad"}, {"code", 400}}}}, 0, "w").code(),
            Status::Code::kUnavailable);
  Status huge = UpstreamErrorStatus(json{{"error", {{"message", std::string(64 * 1024, 'x')}}}}, 500, "w");
  EXPECT_LT(huge.message().size(), 1100u);
  Status down = UpstreamErrorStatus(json::object(), 503, "w");
  EXPECT_EQ(down.code(), Status::Code::kUnavailable);
  EXPECT_NE(down.message().find("503"), std::string::npos);
}

}  // namespace
}  // namespace kimi::upstream
