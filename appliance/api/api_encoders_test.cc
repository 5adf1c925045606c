// The streaming rules of the API, checked frame by frame on ChatSseEncoder's output, and the
// agreement between the streamed and the whole response built from the same events.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/chat_response_builder.h"
#include "api/chat_sse_encoder.h"
#include "api/completion_encoder.h"
#include "api/embedded_backend.h"
#include "api/forward_body.h"
#include "api/request_gate.h"
#include "kimi/chat_format.h"

namespace kimi::api {
namespace {

using Json = nlohmann::ordered_json;

StreamEvent Text(StreamEventKind kind, std::string text) {
  StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}
StreamEvent Begin(int index, std::string name) {
  StreamEvent e;
  e.kind = StreamEventKind::kToolCallBegin;
  e.tool_index = index;
  e.tool_name = name;
  e.tool_call_id = ToolCallId(name, index);
  return e;
}
StreamEvent Args(int index, std::string text) {
  StreamEvent e = Text(StreamEventKind::kToolCallArguments, std::move(text));
  e.tool_index = index;
  return e;
}
StreamEvent End(int index) {
  StreamEvent e;
  e.kind = StreamEventKind::kToolCallEnd;
  e.tool_index = index;
  return e;
}
StreamEvent Finish(std::string reason) {
  StreamEvent e;
  e.kind = StreamEventKind::kFinish;
  e.finish_reason = std::move(reason);
  e.usage = TokenUsage{36, 20, 8};
  return e;
}

struct Stream {
  std::vector<Json> frames;  // every data frame before [DONE]
  bool done = false;         // the last line was [DONE]
};

Stream Parse(const std::string& sse) {
  Stream s;
  size_t pos = 0;
  while (pos < sse.size()) {
    size_t end = sse.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "every frame ends with a blank line";
    if (end == std::string::npos) break;
    std::string line = sse.substr(pos, end - pos);
    pos = end + 2;
    EXPECT_EQ(line.rfind("data: ", 0), 0u) << line;
    std::string data = line.substr(6);
    EXPECT_FALSE(s.done) << "nothing after [DONE]";
    if (data == "[DONE]") {
      s.done = true;
      continue;
    }
    s.frames.push_back(Json::parse(data));  // throws on invalid UTF-8: a split character fails here
  }
  return s;
}

std::string EncodeAll(const std::vector<StreamEvent>& events, ChatStreamOptions options) {
  ChatSseEncoder encoder(ResponseMeta{"chatcmpl-req_1", 1700000000, "kimi-k3"}, options);
  std::string out;
  for (const StreamEvent& e : events) encoder.Encode(e, &out);
  EXPECT_TRUE(encoder.finished());
  return out;
}

bool HasNull(const Json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (HasNull(v)) return true;
    }
  }
  return false;
}

// What a client rebuilds from the frames.
struct Joined {
  std::string content, reasoning;
  std::vector<std::string> arguments;
  std::vector<std::string> names, ids;
};
Joined Join(const Stream& s) {
  Joined j;
  for (const Json& f : s.frames) {
    if (f["choices"].empty()) continue;
    const Json& d = f["choices"][0]["delta"];
    if (d.contains("content")) j.content += d["content"].get<std::string>();
    if (d.contains("reasoning_content")) j.reasoning += d["reasoning_content"].get<std::string>();
    if (!d.contains("tool_calls")) continue;
    const Json& call = d["tool_calls"][0];
    size_t index = call["index"].get<size_t>();
    if (call.contains("id")) {
      EXPECT_EQ(index, j.ids.size()) << "indices start at 0 and rise by one";
      j.ids.push_back(call["id"]);
      j.names.push_back(call["function"]["name"]);
      j.arguments.emplace_back();
    }
    j.arguments.at(index) += call["function"]["arguments"].get<std::string>();
  }
  return j;
}

const std::string kBigArguments = [] {
  std::string s = R"({"city":")";
  for (int i = 0; i < 40; ++i) s += "Zürich 東京 ";
  return s + R"(","days":3})";
}();

std::vector<StreamEvent> MixedEvents() {
  return {Text(StreamEventKind::kReasoning, "Let me "), Text(StreamEventKind::kReasoning, "think."),
          Text(StreamEventKind::kAnswer, "Calling "), Text(StreamEventKind::kAnswer, "tools."),
          Begin(0, "get_weather"), Args(0, kBigArguments), End(0),
          Begin(1, "get_time"), Args(1, "{\"tz\":"), Args(1, "\"UTC\"}"), End(1),
          Finish("tool_calls")};
}

TEST(ChatSseEncoderTest, FramesFollowEveryStreamingRule) {
  ChatStreamOptions options;
  options.argument_chunk_bytes = 16;
  Stream s = Parse(EncodeAll(MixedEvents(), options));
  ASSERT_TRUE(s.done);
  ASSERT_GE(s.frames.size(), 3u);
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const Json& f = s.frames[i];
    EXPECT_FALSE(HasNull(f)) << f.dump();
    EXPECT_EQ(f["id"], "chatcmpl-req_1");
    EXPECT_EQ(f["object"], "chat.completion.chunk");
    EXPECT_TRUE(f["created"].is_number_integer());
    EXPECT_EQ(f["created"], 1700000000);
    EXPECT_EQ(f["model"], "kimi-k3");
    EXPECT_FALSE(f.contains("usage")) << "no top-level usage without include_usage";
    const Json& choice = f["choices"][0];
    const Json& delta = choice["delta"];
    EXPECT_EQ(delta.contains("role"), i == 0) << "role only in the first frame";
    const bool last = i + 1 == s.frames.size();
    EXPECT_EQ(choice.contains("usage"), last) << "usage only in the end frame";
    EXPECT_EQ(choice.contains("finish_reason"), last);
    if (i > 0 && !last) {
      EXPECT_EQ(int(delta.contains("content")) + int(delta.contains("reasoning_content")) +
                    int(delta.contains("tool_calls")),
                1)
          << delta.dump();
    }
  }
  EXPECT_EQ(s.frames[0]["choices"][0]["delta"], (Json{{"role", "assistant"}, {"content", ""}}));
  // Reasoning, reasoning, boundary, then the answer.
  EXPECT_EQ(s.frames[2]["choices"][0]["delta"], (Json{{"reasoning_content", "think."}}));
  EXPECT_EQ(s.frames[3]["choices"][0]["delta"], (Json{{"reasoning_content", ""}}));
  EXPECT_EQ(s.frames[4]["choices"][0]["delta"], (Json{{"content", "Calling "}}));
  const Json& end = s.frames.back()["choices"][0];
  EXPECT_EQ(end["delta"], Json::object());
  EXPECT_EQ(end["finish_reason"], "tool_calls");
  EXPECT_EQ(end["usage"]["prompt_tokens"], 36);
  EXPECT_EQ(end["usage"]["total_tokens"], 56);
  EXPECT_EQ(end["usage"]["completion_tokens_details"]["reasoning_tokens"], 8);
}

TEST(ChatSseEncoderTest, ToolCallsOpenWithTheirIdentityThenCarryBoundedArgumentChunks) {
  ChatStreamOptions options;
  options.argument_chunk_bytes = 16;
  Stream s = Parse(EncodeAll(MixedEvents(), options));
  int openings = 0;
  size_t argument_frames = 0;
  for (const Json& f : s.frames) {
    const Json& d = f["choices"][0]["delta"];
    if (!d.contains("tool_calls")) continue;
    ASSERT_EQ(d["tool_calls"].size(), 1u);
    const Json& call = d["tool_calls"][0];
    if (call.contains("id")) {
      ++openings;
      EXPECT_EQ(call["type"], "function");
      EXPECT_EQ(call["function"]["arguments"], "");
      EXPECT_EQ(call["function"].size(), 2u);
    } else {
      ++argument_frames;
      EXPECT_EQ(call.size(), 2u) << "only index and function: " << call.dump();
      EXPECT_EQ(call["function"].size(), 1u) << "only arguments: " << call.dump();
      const std::string piece = call["function"]["arguments"];
      EXPECT_LE(piece.size(), 16u);
      EXPECT_FALSE(piece.empty());
    }
  }
  EXPECT_EQ(openings, 2);
  EXPECT_GE(argument_frames, kBigArguments.size() / 16) << "a call delivered whole is re-chunked";
  Joined j = Join(s);
  ASSERT_EQ(j.arguments.size(), 2u);
  EXPECT_EQ(j.arguments[0], kBigArguments);
  EXPECT_EQ(j.arguments[1], R"({"tz":"UTC"})");
  EXPECT_EQ(j.ids, (std::vector<std::string>{"functions.get_weather:0", "functions.get_time:1"}));
}

TEST(ChatSseEncoderTest, StreamedAndWholeResponsesAgree) {
  ChatStreamOptions options;
  options.argument_chunk_bytes = 7;
  const std::vector<StreamEvent> events = MixedEvents();
  Joined streamed = Join(Parse(EncodeAll(events, options)));
  ChatResponseBuilder builder;
  for (const StreamEvent& e : events) builder.Emit(e);
  ASSERT_TRUE(builder.finished());
  const Json whole = builder.Build(ResponseMeta{"chatcmpl-req_1", 1700000000, "kimi-k3"});
  const Json& message = whole["choices"][0]["message"];
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], streamed.content);
  EXPECT_EQ(message["reasoning_content"], streamed.reasoning);
  ASSERT_EQ(message["tool_calls"].size(), streamed.arguments.size());
  for (size_t i = 0; i < streamed.arguments.size(); ++i) {
    EXPECT_EQ(message["tool_calls"][i]["id"], streamed.ids[i]);
    EXPECT_EQ(message["tool_calls"][i]["type"], "function");
    EXPECT_EQ(message["tool_calls"][i]["function"]["name"], streamed.names[i]);
    EXPECT_EQ(message["tool_calls"][i]["function"]["arguments"], streamed.arguments[i]);
  }
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(whole["usage"]["completion_tokens"], 20);
}

TEST(ChatSseEncoderTest, IncludeUsageAddsExactlyOneUsageFrame) {
  ChatStreamOptions options;
  options.include_usage = true;
  Stream s = Parse(EncodeAll({Text(StreamEventKind::kAnswer, "hi"), Finish("stop")}, options));
  ASSERT_TRUE(s.done);
  ASSERT_EQ(s.frames.size(), 4u);  // role, content, end, usage
  EXPECT_EQ(s.frames[2]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(s.frames[3]["choices"], Json::array());
  EXPECT_EQ(s.frames[3]["usage"]["prompt_tokens"], 36);
  int with_top_usage = 0;
  for (const Json& f : s.frames) with_top_usage += f.contains("usage");
  EXPECT_EQ(with_top_usage, 1);
}

TEST(ChatSseEncoderTest, BoundaryFrameOnlyWithThinkingOnAndAlsoBeforeTheEnd) {
  ChatStreamOptions on;
  Stream s = Parse(EncodeAll({Text(StreamEventKind::kReasoning, "hmm"), Finish("length")}, on));
  ASSERT_EQ(s.frames.size(), 4u);  // role, reasoning, boundary, end
  EXPECT_EQ(s.frames[2]["choices"][0]["delta"], (Json{{"reasoning_content", ""}}));
  ChatStreamOptions off;
  off.thinking = false;
  Stream t = Parse(EncodeAll({Text(StreamEventKind::kAnswer, "a"), Finish("stop")}, off));
  for (const Json& f : t.frames) EXPECT_NE(f["choices"][0]["delta"], (Json{{"reasoning_content", ""}}));
}

TEST(ChatSseEncoderTest, ArgumentChunksNeverSplitACharacter) {
  ChatStreamOptions options;
  options.argument_chunk_bytes = 1;  // smaller than any multi-byte character
  Stream s = Parse(EncodeAll({Begin(0, "f"), Args(0, "{\"k\":\"東京\"}"), End(0), Finish("tool_calls")}, options));
  Joined j = Join(s);  // Parse() threw if a frame held a split character
  ASSERT_EQ(j.arguments.size(), 1u);
  EXPECT_EQ(j.arguments[0], "{\"k\":\"東京\"}");
}

// Text frames are written without a JSON tree per token; their bytes must be exactly what
// SseFrame() makes of the frame as JSON, escapes (its line-break ones too) and all, and text
// that is not UTF-8 takes the general path.
TEST(ChatSseEncoderTest, TextFramesAreByteForByteTheSerialisedFrame) {
  const ResponseMeta meta{"chatcmpl-\"quoted\"", 1700000000, "kimi/k3 \u00e9"};
  const std::string tricky = std::string("quote \" back \\ nl \n cr \r tab \t bs \b ff \f ctl ") + '\x01' +
                             "\x1f del \x7f Zürich 東京 😀 \u2028 \u2029 \u0085 “\u2028”";
  const std::string not_utf8 = "bad \xff byte";
  for (const auto& [kind, key] : {std::pair{StreamEventKind::kAnswer, "content"},
                                  std::pair{StreamEventKind::kReasoning, "reasoning_content"}}) {
    for (const std::string& text : {tricky, not_utf8}) {
      ChatSseEncoder encoder(meta, ChatStreamOptions{});
      std::string first;
      encoder.Encode(Text(kind, "x"), &first);  // the role frame and one text frame
      std::string out;
      encoder.Encode(Text(kind, text), &out);
      Json frame{{"id", meta.id}, {"object", "chat.completion.chunk"}, {"created", meta.created}, {"model", meta.model}};
      frame["choices"] = Json::array({Json{{"index", 0}, {"delta", Json{{key, text}}}}});
      EXPECT_EQ(out, SseFrame(frame)) << key;
    }
  }
}

TEST(Utf8PrefixLengthTest, CutsOnCharacterBoundaries) {
  EXPECT_EQ(Utf8PrefixLength("abc", 8), 3u);
  EXPECT_EQ(Utf8PrefixLength("ab東", 3), 2u);
  EXPECT_EQ(Utf8PrefixLength("ab東", 5), 5u);
  EXPECT_EQ(Utf8PrefixLength("東京", 1), 3u) << "one whole character at least";
}

TEST(CompletionEncoderTest, StreamAndWholeResponseCarryTheSameText) {
  const std::vector<StreamEvent> events = {Text(StreamEventKind::kAnswer, "The river "),
                                           Text(StreamEventKind::kAnswer, "flows."), Finish("length")};
  ResponseMeta meta{"cmpl-req_2", 1700000001, "kimi-k3"};
  CompletionSseEncoder encoder(meta, /*include_usage=*/false);
  TextCompletionBuilder builder;
  std::string sse;
  for (const StreamEvent& e : events) {
    encoder.Encode(e, &sse);
    builder.Emit(e);
  }
  Stream s = Parse(sse);
  ASSERT_TRUE(s.done);
  std::string text;
  for (const Json& f : s.frames) {
    EXPECT_EQ(f["object"], "text_completion");
    EXPECT_FALSE(HasNull(f));
    text += f["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(s.frames.back()["choices"][0]["finish_reason"], "length");
  const Json whole = builder.Build(meta);
  EXPECT_EQ(whole["choices"][0]["text"], text);
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
}

// With logprobs asked for, each answer frame carries its tokens' entries and the whole response
// carries all of them; reasoning and tool-call frames carry none; without the flag, nothing.
TEST(ChatSseEncoderTest, LogprobsRideOnAnswerFramesAndJoinToTheWholeResponse) {
  std::vector<StreamEvent> events = MixedEvents();
  events[2].logprobs = {TokenLogprobs{"Call", -0.5f, {}}, TokenLogprobs{"ing ", -0.25f, {}}};
  events[3].logprobs = {TokenLogprobs{"tools.", -1.0f, {TokenAlternative{"tools.", -1.0f}}}};
  ChatStreamOptions options;
  options.logprobs = true;
  Stream s = Parse(EncodeAll(events, options));
  std::vector<std::string> streamed;
  for (const Json& f : s.frames) {
    if (f["choices"].empty() || !f["choices"][0].contains("logprobs")) continue;
    EXPECT_TRUE(f["choices"][0]["delta"].contains("content")) << f.dump();
    for (const Json& t : f["choices"][0]["logprobs"]["content"]) streamed.push_back(t["token"]);
  }
  EXPECT_EQ(streamed, (std::vector<std::string>{"Call", "ing ", "tools."}));

  ChatResponseBuilder builder(/*logprobs=*/true);
  for (const StreamEvent& e : events) builder.Emit(e);
  const Json whole = builder.Build(ResponseMeta{"chatcmpl-req_1", 1700000000, "kimi-k3"});
  ASSERT_EQ(whole["choices"][0]["logprobs"]["content"].size(), 3u);
  EXPECT_EQ(whole["choices"][0]["logprobs"]["content"][2]["top_logprobs"][0]["token"], "tools.");

  for (const Json& f : Parse(EncodeAll(events, ChatStreamOptions{})).frames) {
    if (!f["choices"].empty()) {
      EXPECT_FALSE(f["choices"][0].contains("logprobs")) << "not asked for";
    }
  }
  ChatResponseBuilder plain;
  for (const StreamEvent& e : events) plain.Emit(e);
  EXPECT_FALSE(plain.Build(ResponseMeta{"c", 1, "m"})["choices"][0].contains("logprobs"));
}

TEST(CompletionEncoderTest, LegacyLogprobsCountOffsetsOverTheWholeText) {
  std::vector<StreamEvent> events = {Text(StreamEventKind::kAnswer, "ab"), Text(StreamEventKind::kAnswer, "c"),
                                     Finish("length")};
  events[0].logprobs = {TokenLogprobs{"a", -1.0f, {}}, TokenLogprobs{"b", -2.0f, {}}};
  events[1].logprobs = {TokenLogprobs{"c", -3.0f, {}}};
  ResponseMeta meta{"cmpl-req_3", 1700000001, "kimi-k3"};
  CompletionSseEncoder encoder(meta, /*include_usage=*/false, /*logprobs=*/true);
  TextCompletionBuilder builder(/*logprobs=*/true);
  std::string sse;
  for (const StreamEvent& e : events) {
    encoder.Encode(e, &sse);
    builder.Emit(e);
  }
  Stream s = Parse(sse);
  ASSERT_GE(s.frames.size(), 2u);
  EXPECT_EQ(s.frames[1]["choices"][0]["logprobs"]["text_offset"], Json::array({2}));
  const Json whole = builder.Build(meta);
  EXPECT_EQ(whole["choices"][0]["logprobs"]["tokens"], Json::array({"a", "b", "c"}));
  EXPECT_EQ(whole["choices"][0]["logprobs"]["text_offset"], Json::array({0, 1, 2}));
}

TEST(RequestGateTest, MinimalChecksAndResponseMode) {
  EXPECT_EQ(ParseRequest(Endpoint::kChatCompletions, Json::array()).status().code(), Status::Code::kInvalidArgument);
  const Json no_messages{{"model", "kimi-k3"}};
  EXPECT_EQ(ParseRequest(Endpoint::kChatCompletions, no_messages).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseRequest(Endpoint::kCompletions, no_messages).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseRequest(Endpoint::kChatCompletions, "{not json", nullptr, "").status().message(),
            "the request body is not valid JSON");
  // The full request rules apply (appliance/api/request/): a model and at least one message.
  const Json messages = Json::array({Json{{"role", "user"}, {"content", "hi"}}});
  const Json ok{{"model", "kimi-k3"}, {"messages", messages}, {"stream", true},
                {"stream_options", {{"include_usage", true}}}, {"thinking", {{"type", "disabled"}}}};
  Result<ApiRequest> parsed = ParseRequest(Endpoint::kChatCompletions, ok);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ResponseMode mode = ReadResponseMode(*parsed);
  EXPECT_TRUE(mode.stream);
  EXPECT_TRUE(mode.include_usage);
  EXPECT_FALSE(mode.thinking);
  EXPECT_FALSE(mode.logprobs);
  auto mode_of = [](Endpoint endpoint, Json body) {
    Result<ApiRequest> request = ParseRequest(endpoint, body);
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    return request.ok() ? ReadResponseMode(*request) : ResponseMode{};
  };
  EXPECT_TRUE(mode_of(Endpoint::kChatCompletions, Json{{"model", "kimi-k3"}, {"messages", messages}}).thinking);
  EXPECT_TRUE(
      mode_of(Endpoint::kChatCompletions, Json{{"model", "kimi-k3"}, {"messages", messages}, {"logprobs", true}}).logprobs);
  EXPECT_FALSE(
      mode_of(Endpoint::kChatCompletions, Json{{"model", "kimi-k3"}, {"messages", messages}, {"logprobs", false}})
          .logprobs);
  EXPECT_TRUE(mode_of(Endpoint::kCompletions, Json{{"model", "kimi-k3"}, {"prompt", "hi"}, {"logprobs", 0}}).logprobs);
}

// top_k is accepted and reaches the engine's typed request; the API and the engine read it with
// one rule (kimi::ReadGenerationParams), whose error names the field for OpenAI's `param`.
TEST(RequestGateTest, TopKIsAcceptedAndTyped) {
  const Json messages = Json::array({Json{{"role", "user"}, {"content", "hi"}}});
  Result<ApiRequest> parsed =
      ParseRequest(Endpoint::kChatCompletions, Json{{"model", "kimi-k3"}, {"messages", messages}, {"top_k", 5}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->serving.generation.sampling.top_k, 5);
  EXPECT_EQ(IgnoredFieldList(*parsed), "");
  Result<ApiRequest> no_limit =
      ParseRequest(Endpoint::kCompletions, Json{{"model", "kimi-k3"}, {"prompt", "hi"}, {"top_k", -1}});
  ASSERT_TRUE(no_limit.ok()) << no_limit.status().ToString();
  EXPECT_EQ(no_limit->serving.generation.sampling.top_k, 0);
  for (const Json& bad : {Json(1.5), Json(-2), Json("5")}) {
    Status refused =
        ParseRequest(Endpoint::kChatCompletions, Json{{"model", "kimi-k3"}, {"messages", messages}, {"top_k", bad}})
            .status();
    EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument) << bad.dump();
    EXPECT_EQ(RequestErrorParam(refused), "top_k") << refused.ToString();
  }
}

// The OpenAI rules of the generation fields live once (kimi::ReadGenerationParams): the API and
// the kimi-engine serve worker refuse the same bodies with the same message.
TEST(RequestGateTest, TheApiAndTheWorkerApplyOneRuleToTheGenerationFields) {
  const Json messages = Json::array({Json{{"role", "user"}, {"content", "hi"}}});
  for (const auto& [field, value] : std::vector<std::pair<std::string, Json>>{
           {"top_logprobs", 21}, {"top_logprobs", -1}, {"stop", ""}, {"stop", Json::array({"a", ""})},
           {"stop", Json::array({"a", 3})}, {"max_tokens", 0}, {"max_completion_tokens", -3}, {"top_k", -2}}) {
    Json body{{"model", "kimi-k3"}, {"messages", messages}, {"logprobs", true}, {field, value}};
    const Status api = ParseRequest(Endpoint::kChatCompletions, body).status();
    const Status worker = ReadServingRequest(body, ServingEndpoint::kChatCompletions).status();
    EXPECT_EQ(api.code(), Status::Code::kInvalidArgument) << field << "=" << value.dump();
    EXPECT_EQ(api.message(), worker.message()) << field << "=" << value.dump();
    EXPECT_EQ(RequestErrorParam(api).value_or("").substr(0, field.size()), field) << api.ToString();
  }
  // top_logprobs only with logprobs, for both.
  const Json without{{"model", "kimi-k3"}, {"messages", messages}, {"top_logprobs", 2}};
  EXPECT_FALSE(ParseRequest(Endpoint::kChatCompletions, without).ok());
  EXPECT_FALSE(ReadServingRequest(without, ServingEndpoint::kChatCompletions).ok());
}

// The one parse hands on typed values: the engine's request is read from the normalised body,
// and the body an upstream receives is rendered from the typed request (policy edits included).
TEST(RequestGateTest, TypedRequestAndTheBodyForwardedUpstream) {
  const Json body = Json::parse(R"({"model": "kimi-k3", "messages": [{"role": "user", "content": "hi"}],
      "thinking": {"type": "disabled", "effort": "low", "keep": "all"}, "reasoning_effort": "high", "n": 1,
      "max_completion_tokens": 9, "stop": "END", "parallel_tool_calls": true, "frobnicate": 1})");
  Result<ApiRequest> parsed = ParseRequest(Endpoint::kChatCompletions, body);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->serving.chat.thinking);
  EXPECT_EQ(parsed->serving.chat.thinking_effort, "low");
  EXPECT_EQ(parsed->serving.generation.max_tokens, 9);
  EXPECT_EQ(parsed->serving.generation.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(parsed->serving.parallel_tool_calls);
  EXPECT_EQ(IgnoredFieldList(*parsed), "frobnicate");

  ApiRequest edited = *parsed;
  edited.serving.chat.messages[0]["content"] = "[REDACTED:EMAIL]";
  edited.serving.chat.thinking_effort = "medium";
  const Json forwarded = ForwardBody(ToBackendRequest(std::move(edited), "req-1", "kimi-k3"));
  EXPECT_EQ(forwarded["messages"][0]["content"], "[REDACTED:EMAIL]");
  EXPECT_EQ(forwarded["chat_template_kwargs"],
            (Json{{"thinking", false}, {"thinking_effort", "medium"}, {"preserve_thinking", true}}));
  for (const char* resolved : {"thinking", "reasoning_effort", "thinking_effort", "preserve_thinking"}) {
    EXPECT_FALSE(forwarded.contains(resolved)) << resolved;
  }
  EXPECT_EQ(forwarded["n"], 1) << "known sampling fields pass as the rules accepted them";
  EXPECT_FALSE(forwarded.contains("frobnicate")) << "an unknown field reaches no upstream";
  EXPECT_EQ(forwarded["max_tokens"], 9) << "the cap the request settled on, as max_tokens";
  EXPECT_FALSE(forwarded.contains("max_completion_tokens"));

  // A cap the policy set on a request that named none is forwarded as max_tokens.
  Result<ApiRequest> completion = ParseRequest(Endpoint::kCompletions, Json{{"model", "kimi-k3"}, {"prompt", {"Once"}}});
  ASSERT_TRUE(completion.ok()) << completion.status().ToString();
  completion->serving.generation.max_tokens = 64;
  const Json forwarded_completion = ForwardBody(ToBackendRequest(std::move(*completion), "req-2", "kimi-k3"));
  EXPECT_EQ(forwarded_completion["prompt"], "Once");
  EXPECT_EQ(forwarded_completion["max_tokens"], 64);
}

// A developer message is OpenAI's system message: the embedded renderer writes it as one, an
// upstream receives it as one (K3's template would leave a `developer` message out), and the
// policy scans the text that both of them get.
TEST(RequestGateTest, DeveloperMessagesReachThePromptAndTheUpstreamAsSystem) {
  const Json body = Json::parse(R"({"model": "kimi-k3", "messages": [
      {"role": "developer", "content": "You are a support bot.", "name": "ops"},
      {"role": "user", "content": "hi"}], "thinking": false})");
  Result<ApiRequest> parsed = ParseRequest(Endpoint::kChatCompletions, body);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->validated.body["messages"][0]["role"], "system");
  EXPECT_EQ(parsed->serving.chat.messages[0]["role"], "system");

  std::vector<std::string> scanned;
  ChatRequest scan = parsed->serving.chat;
  ASSERT_TRUE(ForEachRenderedText(&scan, [&](std::string* text) { scanned.push_back(*text); }).ok());
  EXPECT_EQ(scanned, (std::vector<std::string>{"You are a support bot.", "ops", "hi"}));

  Result<RenderedPrompt> prompt = ChatFormat::Render(parsed->serving.chat);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_TRUE(prompt->text.starts_with(
      "<|open|>message role=\"system\" name=\"ops\"<|sep|>You are a support bot.<|close|>message<|sep|><|end_of_msg|>"))
      << prompt->text;

  const Json forwarded = ForwardBody(ToBackendRequest(std::move(*parsed), "req-3", "kimi-k3"));
  EXPECT_EQ(forwarded["messages"], Json::parse(R"([{"role": "system", "content": "You are a support bot.", "name": "ops"},
                                                   {"role": "user", "content": "hi"}])"));
}

TEST(EmbeddedBackendTest, ServesNothingUntilAttached) {
  EmbeddedBackend backend("kimi-k3");
  EXPECT_TRUE(backend.Models().empty());
  EXPECT_FALSE(backend.Healthy("kimi-k3"));
  ChatResponseBuilder sink;
  BackendRequest request;
  request.model = "kimi-k3";
  EXPECT_EQ(backend.Generate(request, sink, nullptr).code(), Status::Code::kUnavailable);
  OutputEvent begin{OutputEventKind::kToolCallBegin, "", "search", 2};
  StreamEvent e = ToStreamEvent(begin);
  EXPECT_EQ(e.kind, StreamEventKind::kToolCallBegin);
  EXPECT_EQ(e.tool_call_id, "functions.search:2");
  EXPECT_EQ(e.tool_index, 2);
}

}  // namespace
}  // namespace kimi::api
