#include "tools/serve_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::tools {
namespace {

using Json = nlohmann::ordered_json;

// The JSON objects of "data: {...}\n\n" frames; "[DONE]" as a string.
std::vector<Json> Frames(const std::string& text) {
  std::vector<Json> out;
  size_t at = 0;
  while ((at = text.find("data: ", at)) != std::string::npos) {
    size_t end = text.find("\n\n", at);
    std::string data = text.substr(at + 6, end - at - 6);
    out.push_back(data == "[DONE]" ? Json("[DONE]") : Json::parse(data));
    at = end + 2;
  }
  return out;
}

ResponseIdentity Identity() { return ResponseIdentity{"chatcmpl-1", 1700000000, "kimi-k3"}; }

OutputEvent Out(OutputEventKind kind, std::string text, int index = -1, std::string name = "") {
  return OutputEvent{kind, std::move(text), std::move(name), index};
}

ChatEvent Event(OutputEventKind kind, std::string text, int index = -1, std::string name = "") {
  ChatEvent e;
  e.output = Out(kind, std::move(text), index, std::move(name));
  return e;
}

TEST(ChunkWriter, WritesVllmChunks) {
  ChunkWriter writer(Identity(), /*include_usage=*/true);
  std::vector<Json> role = Frames(writer.RoleFrame());
  ASSERT_EQ(role.size(), 1u);
  EXPECT_EQ(role[0]["id"], "chatcmpl-1");
  EXPECT_EQ(role[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(role[0]["created"], 1700000000);
  EXPECT_EQ(role[0]["choices"][0]["delta"], (Json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(role[0]["choices"][0]["finish_reason"].is_null());

  EXPECT_EQ(Frames(writer.OutputFrame(Event(OutputEventKind::kReasoning, "hm")))[0]["choices"][0]["delta"],
            (Json{{"reasoning", "hm"}}));
  EXPECT_EQ(Frames(writer.OutputFrame(Event(OutputEventKind::kAnswer, "ok")))[0]["choices"][0]["delta"],
            (Json{{"content", "ok"}}));
  Json begin = Frames(writer.OutputFrame(Event(OutputEventKind::kToolCallBegin, "", 0, "get")))[0]["choices"][0]["delta"];
  const Json& call = begin["tool_calls"][0];
  EXPECT_EQ(call["index"], 0);
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"], (Json{{"name", "get"}, {"arguments", ""}}));
  EXPECT_EQ(call["id"].get<std::string>().rfind("chatcmpl-tool-", 0), 0u);
  EXPECT_EQ(Frames(writer.OutputFrame(Event(OutputEventKind::kToolCallArguments, "{}", 0)))[0]["choices"][0]["delta"],
            (Json{{"tool_calls", Json::array({Json{{"index", 0}, {"function", {{"arguments", "{}"}}}}})}}));
  EXPECT_EQ(writer.OutputFrame(Event(OutputEventKind::kToolCallEnd, "", 0, "get")), "");

  ChatEvent finish;
  finish.kind = ChatEvent::Kind::kFinish;
  finish.finish_reason = "tool_calls";
  finish.usage = ChatUsage{10, 4, 1};
  std::vector<Json> end = Frames(writer.FinishFrames(finish));
  ASSERT_EQ(end.size(), 3u);
  EXPECT_EQ(end[0]["choices"][0]["delta"], Json::object());
  EXPECT_EQ(end[0]["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(end[1]["choices"], Json::array());
  EXPECT_EQ(end[1]["usage"]["total_tokens"], 14);
  EXPECT_EQ(end[1]["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);
  EXPECT_EQ(end[2], "[DONE]");

  ChunkWriter no_usage(Identity(), false);
  EXPECT_EQ(Frames(no_usage.FinishFrames(finish)).size(), 2u);
}

// The worker's frames are read by line readers too (the appliance, vLLM clients): a line break
// that JSON carries raw must not cut a frame.
TEST(ChunkWriter, FramesStayOneLineWhateverTheTextHolds) {
  ChunkWriter writer(Identity(), false);
  const std::string text = "a\u2028b\u2029c\u0085d";
  const std::string frame = writer.OutputFrame(Event(OutputEventKind::kAnswer, text));
  for (const char* raw : {"\u2028", "\u2029", "\u0085"}) EXPECT_EQ(frame.find(raw), std::string::npos) << raw;
  const std::vector<Json> frames = Frames(frame);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0]["choices"][0]["delta"]["content"], text);
}

TEST(ResponseBuilder, JoinsTheStream) {
  ResponseBuilder builder(Identity());
  auto out = [](OutputEvent o) {
    ChatEvent e;
    e.output = std::move(o);
    return e;
  };
  builder.Add(out(Out(OutputEventKind::kReasoning, "a")));
  builder.Add(out(Out(OutputEventKind::kReasoning, "b")));
  builder.Add(out(Out(OutputEventKind::kToolCallBegin, "", 0, "f")));
  builder.Add(out(Out(OutputEventKind::kToolCallArguments, "{\"x\":", 0)));
  builder.Add(out(Out(OutputEventKind::kToolCallArguments, "1}", 0)));
  builder.Add(out(Out(OutputEventKind::kToolCallEnd, "", 0, "f")));
  ChatEvent finish;
  finish.kind = ChatEvent::Kind::kFinish;
  finish.finish_reason = "tool_calls";
  finish.usage = ChatUsage{3, 5, 2};
  builder.Add(finish);
  Json r = builder.Build();
  EXPECT_EQ(r["object"], "chat.completion");
  const Json& message = r["choices"][0]["message"];
  EXPECT_EQ(message["reasoning"], "ab");
  EXPECT_TRUE(message["content"].is_null());
  EXPECT_EQ(message["tool_calls"][0]["function"], (Json{{"name", "f"}, {"arguments", "{\"x\":1}"}}));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(r["usage"]["prompt_tokens"], 3);
}

TEST(ChunkWriter, CompletionsWriteTextChoices) {
  ResponseIdentity identity = NewResponseIdentity("m", ServingEndpoint::kCompletions);
  EXPECT_EQ(identity.id.rfind("cmpl-", 0), 0u);
  ChunkWriter writer(identity, /*include_usage=*/false);
  EXPECT_EQ(writer.RoleFrame(), "");
  Json chunk = Frames(writer.OutputFrame(Event(OutputEventKind::kAnswer, "once")))[0];
  EXPECT_EQ(chunk["object"], "text_completion");
  EXPECT_EQ(chunk["choices"][0]["text"], "once");
  EXPECT_FALSE(chunk["choices"][0].contains("delta"));
  ChatEvent finish;
  finish.kind = ChatEvent::Kind::kFinish;
  finish.finish_reason = "length";
  std::vector<Json> end = Frames(writer.FinishFrames(finish));
  EXPECT_EQ(end[0]["choices"][0]["text"], "");
  EXPECT_EQ(end[0]["choices"][0]["finish_reason"], "length");

  ResponseBuilder builder(identity);
  ChatEvent text;
  text.output = Out(OutputEventKind::kAnswer, "upon");
  builder.Add(text);
  builder.Add(finish);
  Json r = builder.Build();
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["choices"][0]["text"], "upon");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
}

// An error's message quoting request bytes cut inside a character: dump() threw, which in a
// stream's provider ends the worker.
TEST(ErrorJson, AMessageThatIsNotUtf8IsWrittenWithReplacementCharacters) {
  const Json e = ErrorJson(Status::InvalidArgument(std::string("stop string 'ab\xE1\xBA' is too long")));
  EXPECT_EQ(e["message"], "stop string 'ab\xEF\xBF\xBD' is too long");
  EXPECT_NO_THROW(e.dump());
}

TEST(ErrorJson, VllmShapeAndStatus) {
  Json e = ErrorJson(Status::InvalidArgument("temperature must be a number"));
  EXPECT_EQ(e["object"], "error");
  EXPECT_EQ(e["code"], 400);
  EXPECT_EQ(e["message"], "temperature must be a number");
  EXPECT_EQ(ErrorHttpStatus(Status::ResourceExhausted("too big for the budget")), 400);
  EXPECT_EQ(ErrorHttpStatus(Status::NotFound("model")), 404);
  EXPECT_EQ(ErrorHttpStatus(Status::PermissionDenied("Host")), 403);
  EXPECT_EQ(ErrorJson(Status::PermissionDenied("Host"))["type"], "PermissionDeniedError");
  EXPECT_EQ(ErrorHttpStatus(Status::Internal("bug")), 500);
}

TEST(ChunkWriter, AnswerFramesCarryTheirTokensLogprobs) {
  ChunkWriter writer(Identity(), false);
  ChatEvent answer = Event(OutputEventKind::kAnswer, "hi\xe4\xbd\xa0");
  answer.logprobs = {TokenLogprobs{"hi", -0.5f, {TokenAlternative{"hi", -0.5f}, TokenAlternative{"ho", -1.5f}}},
                     TokenLogprobs{"\xe4\xbd", -0.25f, {}}, TokenLogprobs{"\xa0", -0.125f, {}}};
  const Json logprobs = Frames(writer.OutputFrame(answer))[0]["choices"][0]["logprobs"];
  ASSERT_EQ(logprobs["content"].size(), 3u);
  EXPECT_EQ(logprobs["content"][0]["token"], "hi");
  EXPECT_EQ(logprobs["content"][0]["top_logprobs"][1]["token"], "ho");
  EXPECT_EQ(logprobs["content"][1]["token"], "bytes:\\xe4\\xbd") << "a part of a character is named by its bytes";
  EXPECT_EQ(logprobs["content"][1]["bytes"], Json::array({0xe4, 0xbd}));
  EXPECT_DOUBLE_EQ(logprobs["content"][2]["logprob"].get<double>(), -0.125);
  EXPECT_TRUE(Frames(writer.OutputFrame(Event(OutputEventKind::kAnswer, "x")))[0]["choices"][0]["logprobs"].is_null());

  ResponseIdentity identity = NewResponseIdentity("m", ServingEndpoint::kCompletions);
  ChunkWriter completion(identity, false);
  Frames(completion.OutputFrame(answer));
  ChatEvent more = Event(OutputEventKind::kAnswer, "!");
  more.logprobs = {TokenLogprobs{"!", -2.0f, {TokenAlternative{"!", -2.0f}}}};
  const Json legacy = Frames(completion.OutputFrame(more))[0]["choices"][0]["logprobs"];
  EXPECT_EQ(legacy["tokens"], Json::array({"!"}));
  EXPECT_EQ(legacy["text_offset"], Json::array({5})) << "offsets count the bytes already sent";
  EXPECT_DOUBLE_EQ(legacy["top_logprobs"][0]["!"].get<double>(), -2.0);
}

}  // namespace
}  // namespace kimi::tools
