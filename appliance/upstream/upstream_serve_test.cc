// UpstreamBackend against a real `kimi-engine serve` worker on a k3-nano synthetic model: the
// events that reach the appliance through HTTP, SSE and the normaliser are exactly the events
// the engine's ChatService produces in process for the same greedy request; the worker's
// health and model list drive Healthy(); a client that goes away frees its sequence on the
// worker; the worker's refusals of the request come back as InvalidArgument with the engine's
// message, a model it does not serve as BadGateway (the appliance's configuration at fault).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "api/request_gate.h"
#include "kimi/chat_service.h"
#include "kimi/serving_request.h"
#include "upstream/upstream_backend.h"

namespace kimi::upstream {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string EngineBinary() {
  const char* build = std::getenv("KIMI_BUILD_DIR");
  return std::string(build ? build : ".") + "/engine/kimi-engine";
}

// A running `kimi-engine serve`, its port read from its "listening" log line.
class Worker {
 public:
  // extra: more flags for `serve`, after the ones every worker here takes.
  bool Start(const std::string& model_dir, std::string* log, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {EngineBinary(), "serve", "--model", model_dir, "--port", "0",
                                     "--served-model-name", "kimi-k3", "--threads", "1", "--default-max-tokens", "32"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    stderr_ = fdopen(fds[0], "r");
    char line[4096];
    while (fgets(line, sizeof line, stderr_) != nullptr) {
      *log += line;
      Json event = Json::parse(line, nullptr, false);
      if (event.is_object() && event.value("msg", "") == "listening") {
        url_ = "http://" + event["address"].get<std::string>();
        return true;
      }
    }
    return false;
  }

  // SIGTERM, then the exit status.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (stderr_ != nullptr) fclose(stderr_);
    stderr_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  ~Worker() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stderr_ != nullptr) fclose(stderr_);
  }

  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  FILE* stderr_ = nullptr;
  std::string url_;
};

struct RecordingSink : api::EventSink {
  std::vector<api::StreamEvent> events;
  size_t accept = SIZE_MAX;
  bool Emit(const api::StreamEvent& e) override {
    if (events.size() >= accept) return false;
    events.push_back(e);
    return true;
  }
};

// "kind|tool index|name|text", the parts both paths must agree on (call ids are random).
std::string Key(int kind, int tool_index, const std::string& name, const std::string& text) {
  return std::to_string(kind) + "|" + std::to_string(tool_index) + "|" + name + "|" + text;
}

Json GreedyBody(bool thinking) {
  return Json{{"model", "kimi-k3"},
              {"messages", Json::array({Json{{"role", "user"}, {"content", "Name three rivers."}}})},
              {"max_tokens", 24},
              {"temperature", 0},
              {"thinking", {{"type", thinking ? "enabled" : "disabled"}}}};
}

// The backend request the appliance's API makes of `body` (a completions body when it has a
// prompt).
api::BackendRequest ApiRequest(const Json& body) {
  const api::Endpoint endpoint = body.contains("prompt") ? api::Endpoint::kCompletions : api::Endpoint::kChatCompletions;
  Result<api::ApiRequest> parsed = api::ParseRequest(endpoint, body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return api::ToBackendRequest(std::move(parsed).value(), "it-1", "kimi-k3");
}

// A request whose forwarded body says `field: value` although the API would refuse it: what
// the worker checks for itself.
api::BackendRequest WithForwardedField(api::BackendRequest request, const std::string& field, const Json& value) {
  Json body = *request.validated_body;
  body[field] = value;
  request.validated_body = std::make_shared<const Json>(std::move(body));
  return request;
}

double MetricValue(const std::string& url, const std::string& name) {
  httplib::Client client(url);
  httplib::Result r = client.Get("/metrics");
  if (!r || r->status != 200) return -1;
  size_t at = r->body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::atof(r->body.c_str() + at + name.size() + 2);
}

class UpstreamServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() / ("kimi_upstream_serve_" + std::to_string(getpid()))).string());
    fs::remove_all(*dir_);
    std::string synth = EngineBinary() + " synth --preset k3-nano --seed 3 --out " + *dir_ + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(synth.c_str()), 0) << synth;
    worker_ = new Worker();
    std::string log;
    ASSERT_TRUE(worker_->Start(*dir_, &log)) << "kimi-engine serve did not start:\n" << log;
  }
  static void TearDownTestSuite() {
    if (worker_ != nullptr) {
      EXPECT_EQ(worker_->Stop(), 0) << "serve exits 0 on SIGTERM";
    }
    delete worker_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  UpstreamBackend Backend() {
    UpstreamOptions o;
    o.name = "upstream:worker";
    o.url = worker_->url();
    o.timeout_ms = 120'000;  // one core shared with other builds: a bound, not a measurement
    return UpstreamBackend(o);
  }

  static std::string* dir_;
  static Worker* worker_;
};
std::string* UpstreamServeTest::dir_ = nullptr;
Worker* UpstreamServeTest::worker_ = nullptr;

TEST_F(UpstreamServeTest, HealthAndModels) {
  UpstreamBackend backend = Backend();
  ASSERT_TRUE(backend.CheckHealth().ok());
  EXPECT_TRUE(backend.Healthy("kimi-k3"));
  EXPECT_FALSE(backend.Healthy("gpt-4"));
  EXPECT_EQ(backend.Models(), std::vector<std::string>{"kimi-k3"});
}

// A worker on loopback has no credential to check: a page that rebinds its own name to
// 127.0.0.1 generated through it and read the answers (200), past the appliance's keys, policy
// and audit log.
TEST_F(UpstreamServeTest, AWorkerOnLoopbackRefusesARequestForAnotherHost) {
  httplib::Client client(worker_->url());
  for (const char* path : {"/v1/models", "/health", "/metrics"}) {
    httplib::Result refused = client.Get(path, httplib::Headers{{"Host", "rebind.attacker.example:8000"}});
    ASSERT_TRUE(refused) << path;
    EXPECT_EQ(refused->status, 403) << path;
    EXPECT_NE(refused->body.find("PermissionDeniedError"), std::string::npos) << refused->body;
  }
  httplib::Result generated = client.Post("/v1/chat/completions", httplib::Headers{{"Host", "rebind.attacker.example"}},
                                          GreedyBody(false).dump(), "application/json");
  ASSERT_TRUE(generated);
  EXPECT_EQ(generated->status, 403);
  httplib::Result local = client.Get("/v1/models", httplib::Headers{{"Host", "localhost:8000"}});
  ASSERT_TRUE(local);
  EXPECT_EQ(local->status, 200);
}

TEST_F(UpstreamServeTest, SameEventsAsTheEngineInProcess) {
  ChatServiceOptions options;
  options.model.threads = 1;
  options.default_max_tokens = 32;
  auto service = ChatService::Open(*dir_, options);
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  for (bool thinking : {true, false}) {
    Json body = GreedyBody(thinking);
    std::vector<std::string> direct;
    ChatUsage direct_usage;
    std::string direct_finish;
    {
      // The appliance forwards thinking as chat_template_kwargs; the engine reads both forms alike.
      auto request = ReadServingRequest(body, ServingEndpoint::kChatCompletions);
      ASSERT_TRUE(request.ok()) << request.status().ToString();
      auto stream = (*service)->Start(*request);
      ASSERT_TRUE(stream.ok()) << stream.status().ToString();
      ChatEvent e;
      while ((*stream)->Next(&e)) {
        ASSERT_NE(e.kind, ChatEvent::Kind::kError) << e.error.ToString();
        if (e.kind == ChatEvent::Kind::kFinish) {
          direct_usage = e.usage;
          direct_finish = e.finish_reason;
        } else {
          direct.push_back(Key(int(e.output.kind), e.output.tool_index, e.output.tool_name, e.output.text));
        }
      }
    }
    UpstreamBackend backend = Backend();
    RecordingSink sink;
    Status s = backend.Generate(ApiRequest(body), sink, nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_FALSE(sink.events.empty());
    std::vector<std::string> remote;
    for (size_t i = 0; i + 1 < sink.events.size(); ++i) {
      const api::StreamEvent& e = sink.events[i];
      // StreamEventKind and OutputEventKind list the five output kinds in the same order.
      remote.push_back(Key(int(e.kind), e.tool_index, e.tool_name, e.text));
    }
    EXPECT_FALSE(direct.empty());
    EXPECT_EQ(remote, direct) << "thinking " << thinking;
    const api::StreamEvent& finish = sink.events.back();
    EXPECT_EQ(finish.kind, api::StreamEventKind::kFinish);
    EXPECT_EQ(finish.finish_reason, direct_finish);
    EXPECT_EQ(finish.usage.prompt_tokens, direct_usage.prompt_tokens);
    EXPECT_EQ(finish.usage.completion_tokens, direct_usage.completion_tokens);
    EXPECT_EQ(finish.usage.reasoning_tokens, direct_usage.reasoning_tokens);
    EXPECT_GT(finish.usage.prompt_tokens, 0);
  }
}

// `serve --keep-alive-timeout S` closes a keep-alive connection idle for S seconds, and a
// backend whose pooled connection the worker closed that way sends its next request on a new
// one: both requests succeed.
TEST_F(UpstreamServeTest, WorkerClosesIdleConnectionsAfterItsKeepAliveTimeout) {
  Worker worker;
  std::string log;
  ASSERT_TRUE(worker.Start(*dir_, &log, {"--keep-alive-timeout", "1"})) << log;
  httplib::Client client(worker.url());
  client.set_keep_alive(true);
  httplib::Result first = client.Get("/health");
  ASSERT_TRUE(first && first->status == 200);
  ASSERT_TRUE(client.is_socket_open());
  // The library's client sees the close only at its next request; the server's side of it
  // shows as the socket turning readable with nothing to read (EOF) once the timeout has passed.
  const int fd = client.socket();
  bool closed = false;
  for (int waited_ms = 0; waited_ms < 3'500 && !closed; waited_ms += 50) {  // the default is 5 s
    char byte;
    closed = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    if (!closed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(closed) << "the worker kept an idle connection open past --keep-alive-timeout 1";

  UpstreamOptions o;
  o.name = "upstream:short-keep-alive";
  o.url = worker.url();
  o.timeout_ms = 120'000;
  UpstreamBackend backend(o);
  for (int round = 0; round < 2; ++round) {
    RecordingSink sink;
    api::BackendRequest r = ApiRequest(Json{{"model", "kimi-k3"}, {"prompt", "Once"}, {"max_tokens", 2},
                                            {"temperature", 0}});
    r.endpoint = api::Endpoint::kCompletions;
    Status s = backend.Generate(r, sink, nullptr);
    ASSERT_TRUE(s.ok()) << "request " << round << ": " << s.ToString();
    ASSERT_FALSE(sink.events.empty());
    EXPECT_EQ(sink.events.back().kind, api::StreamEventKind::kFinish);
    if (round == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past the worker's 1 s
  }
  EXPECT_EQ(worker.Stop(), 0);
}

TEST_F(UpstreamServeTest, CompletionsEndpoint) {
  UpstreamBackend backend = Backend();
  RecordingSink sink;
  api::BackendRequest r = ApiRequest(Json{{"model", "kimi-k3"}, {"prompt", "Once upon a time"}, {"max_tokens", 5},
                                          {"temperature", 0}});
  r.endpoint = api::Endpoint::kCompletions;
  Status s = backend.Generate(r, sink, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(sink.events.empty());
  for (size_t i = 0; i + 1 < sink.events.size(); ++i) EXPECT_EQ(sink.events[i].kind, api::StreamEventKind::kAnswer);
  EXPECT_EQ(sink.events.back().kind, api::StreamEventKind::kFinish);
  EXPECT_EQ(sink.events.back().usage.completion_tokens, 5);
  EXPECT_EQ(sink.events.back().finish_reason, "length");
}

TEST_F(UpstreamServeTest, ClientGoneFreesTheWorkersSequence) {
  const double cancelled_before = MetricValue(worker_->url(), "kimi_engine_requests_cancelled_total");
  ASSERT_GE(cancelled_before, 0);
  UpstreamBackend backend = Backend();
  RecordingSink sink;
  sink.accept = 1;
  Json body = GreedyBody(true);
  body["max_tokens"] = 2000;
  Status s = backend.Generate(ApiRequest(body), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kCancelled) << s.ToString();
  // The worker notices at its next write and cancels; wait for its counter with a generous bound.
  double cancelled = cancelled_before;
  for (int i = 0; i < 600 && cancelled == cancelled_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancelled = MetricValue(worker_->url(), "kimi_engine_requests_cancelled_total");
  }
  EXPECT_EQ(cancelled, cancelled_before + 1);
  EXPECT_EQ(MetricValue(worker_->url(), "kimi_engine_requests_running"), 0);
}

// The worker's /metrics carries the runtime's latency histograms and preemption counter.
TEST_F(UpstreamServeTest, WorkerMetricsHaveLatencyHistograms) {
  UpstreamBackend backend = Backend();
  RecordingSink sink;
  Json body = GreedyBody(false);
  body["max_tokens"] = 3;
  ASSERT_TRUE(backend.Generate(ApiRequest(body), sink, nullptr).ok());
  for (const char* name : {"kimi_engine_time_to_first_token_seconds", "kimi_engine_queue_time_seconds",
                           "kimi_engine_e2e_request_latency_seconds"}) {
    const double count = MetricValue(worker_->url(), std::string(name) + "_count");
    EXPECT_GE(count, 1) << name;
    EXPECT_EQ(MetricValue(worker_->url(), std::string(name) + "_bucket{le=\"+Inf\"}"), count) << name;
    EXPECT_GE(MetricValue(worker_->url(), std::string(name) + "_sum"), 0) << name;
  }
  EXPECT_GE(MetricValue(worker_->url(), "kimi_engine_inter_token_latency_seconds_count"), 0);
  EXPECT_EQ(MetricValue(worker_->url(), "kimi_engine_preemptions_total"), 0);
}

TEST_F(UpstreamServeTest, WorkerRefusalsNameWhoIsAtFault) {
  UpstreamBackend backend = Backend();
  RecordingSink sink;
  Status s = backend.Generate(WithForwardedField(ApiRequest(GreedyBody(false)), "temperature", "hot"), sink, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("temperature"), std::string::npos) << s.message();
  EXPECT_TRUE(sink.events.empty());

  // A model the worker does not serve is the appliance's configuration at fault, not the client.
  api::BackendRequest other = WithForwardedField(ApiRequest(GreedyBody(false)), "model", "not-served");
  Status unknown = backend.Generate(other, sink, nullptr);
  EXPECT_EQ(unknown.code(), Status::Code::kBadGateway) << unknown.ToString();
  EXPECT_NE(unknown.message().find("404"), std::string::npos) << unknown.message();
}

}  // namespace
}  // namespace kimi::upstream
