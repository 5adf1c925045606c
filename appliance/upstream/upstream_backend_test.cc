// UpstreamBackend against an in-process server playing vLLM (fake_openai_server.h says why a
// fake: these are vLLM's quirks and failures that a healthy `kimi-engine serve` never shows).
#include "upstream/upstream_backend.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/request_gate.h"
#include "upstream/fake_openai_server.h"

namespace kimi::upstream {
namespace {

using nlohmann::json;
using testing::Chunk;
using testing::FakeOpenAiServer;
using testing::FakeReply;
using testing::SseData;

struct RecordingSink : api::EventSink {
  std::vector<api::StreamEvent> events;
  size_t accept = SIZE_MAX;  // events accepted before reporting the client gone
  bool Emit(const api::StreamEvent& e) override {
    if (events.size() >= accept) return false;
    events.push_back(e);
    return true;
  }
  std::string Text(api::StreamEventKind kind) const {
    std::string out;
    for (const auto& e : events) {
      if (e.kind == kind) out += e.text;
    }
    return out;
  }
};

api::BackendRequest Request() {
  const nlohmann::ordered_json body = {
      {"model", "kimi-k3"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"thinking", {{"type", "enabled"}}}};
  Result<api::ApiRequest> parsed = api::ParseRequest(api::Endpoint::kChatCompletions, body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return api::ToBackendRequest(std::move(parsed).value(), "req-1", "kimi-k3");
}

UpstreamOptions Options(const std::string& url) {
  UpstreamOptions o;
  o.name = "upstream:test";
  o.url = url;
  o.connect_timeout_ms = 1'000;
  o.timeout_ms = 10'000;
  return o;
}

// Cuts `text` into pieces at every `step` bytes: the reads the client sees.
std::vector<std::string> CutEvery(const std::string& text, size_t step) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size(); i += step) pieces.push_back(text.substr(i, step));
  return pieces;
}

std::string VllmStream() {
  std::string s = ": vllm keep-alive\n\n";
  s += SseData(Chunk({{"role", "assistant"}, {"content", ""}}));
  s += SseData(Chunk({{"reasoning", "Caf\xC3\xA9 think"}}));
  s += SseData(Chunk({{"reasoning", " done"}, {"content", "Answer"}}));
  json call = {{"index", 0}, {"id", "call_x"}, {"type", "function"},
               {"function", {{"name", "lookup"}, {"arguments", "{\"q\":\"caf\xC3\xA9\"}"}}}};
  s += SseData(Chunk({{"tool_calls", {call}}}));
  s += SseData(Chunk(json::object(), "tool_calls"));
  s += SseData({{"choices", json::array()}, {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 9}}}});
  s += "data: [DONE]\n\n";
  return s;
}

TEST(UpstreamBackend, NormalisesAVllmStreamSplitAtOddBytes) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.pieces = CutEvery(VllmStream(), 7)});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  api::BackendOutcome outcome;
  Status s = backend.Generate(Request(), sink, &outcome);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(outcome.backend, "upstream:test");
  EXPECT_EQ(sink.Text(api::StreamEventKind::kReasoning), "Caf\xC3\xA9 think done");
  EXPECT_EQ(sink.Text(api::StreamEventKind::kAnswer), "Answer");
  EXPECT_EQ(sink.Text(api::StreamEventKind::kToolCallArguments), "{\"q\":\"caf\xC3\xA9\"}");
  ASSERT_FALSE(sink.events.empty());
  const api::StreamEvent& last = sink.events.back();
  EXPECT_EQ(last.kind, api::StreamEventKind::kFinish);
  EXPECT_EQ(last.finish_reason, "tool_calls");
  EXPECT_EQ(last.usage.prompt_tokens, 11);
  EXPECT_EQ(last.usage.completion_tokens, 9);
  // Reasoning of the combined delta comes before its answer text.
  EXPECT_EQ(sink.events[1].kind, api::StreamEventKind::kReasoning);
  EXPECT_EQ(sink.events[2].kind, api::StreamEventKind::kAnswer);

  std::vector<json> bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0]["stream"], true);
  EXPECT_EQ(bodies[0]["stream_options"]["include_usage"], true);
  EXPECT_EQ(bodies[0]["chat_template_kwargs"]["thinking"], true);
  EXPECT_FALSE(bodies[0].contains("thinking"));
}

TEST(UpstreamBackend, PriorityIsSentOnlyWhenConfigured) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.pieces = {VllmStream()}});
  api::BackendRequest request = Request();
  request.priority = 1;
  for (bool send : {false, true}) {
    UpstreamOptions options = Options(server.url());
    options.send_priority = send;
    UpstreamBackend backend(options);
    RecordingSink sink;
    ASSERT_TRUE(backend.Generate(request, sink, nullptr).ok());
  }
  std::vector<json> bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_FALSE(bodies[0].contains("priority"));
  EXPECT_EQ(bodies[1]["priority"], 1);
}

TEST(UpstreamBackend, ClientGoneClosesTheUpstreamConnection) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.pieces = {SseData(Chunk({{"role", "assistant"}, {"content", ""}}))},
                            .repeat_until_disconnect = SseData(Chunk({{"content", "x"}}))});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  sink.accept = 3;
  Status s = backend.Generate(Request(), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kCancelled) << s.ToString();
  EXPECT_EQ(sink.events.size(), 3u);
  EXPECT_TRUE(server.WaitForDisconnect()) << "the upstream kept streaming to a closed request";
}

TEST(UpstreamBackend, RefusedConnectionIsUnavailableAndUnhealthy) {
  std::string url;
  {
    FakeOpenAiServer gone;
    url = gone.url();
  }
  UpstreamBackend backend(Options(url));
  RecordingSink sink;
  Status s = backend.Generate(Request(), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_FALSE(backend.CheckHealth().ok());
  EXPECT_FALSE(backend.Healthy("kimi-k3"));
}

TEST(UpstreamBackend, UpstreamClientErrorKeepsItsMessage) {
  FakeOpenAiServer server;
  json error = {{"object", "error"}, {"message", "This model's maximum context length is 8 tokens"}, {"code", 400}};
  server.SetReply(FakeReply{.status = 400, .content_type = "application/json", .pieces = {error.dump()}});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  Status s = backend.Generate(Request(), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "This model's maximum context length is 8 tokens");
  EXPECT_TRUE(sink.events.empty());
}

TEST(UpstreamBackend, UpstreamServerErrorIsUnavailable) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.status = 500, .content_type = "text/plain", .pieces = {"Internal Server Error"}});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  EXPECT_EQ(backend.Generate(Request(), sink, nullptr).code(), Status::Code::kUnavailable);
}

TEST(UpstreamBackend, SilentUpstreamTimesOut) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.stall = true});
  UpstreamOptions o = Options(server.url());
  o.timeout_ms = 300;
  UpstreamBackend backend(o);
  RecordingSink sink;
  Status s = backend.Generate(Request(), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kDeadlineExceeded) << s.ToString();
}

TEST(UpstreamBackend, StreamCutBeforeFinishIsAnError) {
  FakeOpenAiServer server;
  server.SetReply(FakeReply{.pieces = {SseData(Chunk({{"content", "partial"}})), "data: {\"choi"}});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  Status s = backend.Generate(Request(), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].text, "partial");
}

TEST(UpstreamBackend, WholeJsonAnswerIsAccepted) {
  FakeOpenAiServer server;
  json whole = {{"object", "chat.completion"},
                {"choices", {{{"index", 0}, {"message", {{"content", "whole"}}}, {"finish_reason", "stop"}}}}};
  server.SetReply(FakeReply{.content_type = "application/json", .pieces = {whole.dump()}});
  UpstreamBackend backend(Options(server.url()));
  RecordingSink sink;
  ASSERT_TRUE(backend.Generate(Request(), sink, nullptr).ok());
  EXPECT_EQ(sink.Text(api::StreamEventKind::kAnswer), "whole");
  EXPECT_EQ(sink.events.back().finish_reason, "stop");
}

TEST(UpstreamBackend, HealthFollowsHealthAndModelList) {
  FakeOpenAiServer server;
  UpstreamBackend backend(Options(server.url()));
  EXPECT_FALSE(backend.Healthy("kimi-k3"));  // not checked yet
  ASSERT_TRUE(backend.CheckHealth().ok());
  EXPECT_TRUE(backend.Healthy("kimi-k3"));
  EXPECT_FALSE(backend.Healthy("other"));
  EXPECT_EQ(backend.Models(), std::vector<std::string>{"kimi-k3"});
  server.SetHealthStatus(503);
  EXPECT_FALSE(backend.CheckHealth().ok());
  EXPECT_FALSE(backend.Healthy("kimi-k3"));
  EXPECT_TRUE(backend.Models().empty());
  server.SetHealthStatus(200);
  server.SetModels({"served-k3"});
  UpstreamOptions renamed = Options(server.url() + "/");
  renamed.models = {"kimi-k3"};
  renamed.upstream_model = "served-k3";
  UpstreamBackend aliased(renamed);
  ASSERT_TRUE(aliased.CheckHealth().ok());
  EXPECT_TRUE(aliased.Healthy("kimi-k3"));
  EXPECT_FALSE(aliased.Healthy("served-k3"));
}

TEST(UpstreamBackend, HealthThreadChecksAtStart) {
  FakeOpenAiServer server;
  UpstreamOptions o = Options(server.url());
  o.health_interval_ms = 20;
  UpstreamBackend backend(o);
  // The thread's first check makes it healthy; wait for it with a generous bound.
  for (int i = 0; i < 1000 && !backend.Healthy("kimi-k3"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(backend.Healthy("kimi-k3"));
}

}  // namespace
}  // namespace kimi::upstream
