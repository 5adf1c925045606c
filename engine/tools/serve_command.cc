// kimi-engine serve: one model behind the subset of vLLM's OpenAI-compatible HTTP server that
// the appliance's upstream adapter uses, so that the appliance drives a remote engine worker
// and a vLLM server through the same code:
//   POST /v1/chat/completions  stream or not; chat_template_kwargs, tools, tool_choice,
//                              response_format, sampling fields; vLLM's output fields
//                              (delta.reasoning) as serve_protocol.h describes
//   POST /v1/completions       the same for a plain text prompt (vLLM's text_completion)
//   GET  /v1/models            the one served model
//   GET  /health               200 once the model is loaded
//   GET  /metrics              the runtime's counters (Prometheus text)
// Every request runs through the engine's ChatService (render, encode, continuous-batching
// runtime, output parser). A client that disconnects cancels its sequence at its next token.
// Runs until SIGINT or SIGTERM.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "kimi/chat_service.h"
#include "kimi/serving_request.h"
#include "kimi/config.h"
#include "kimi/log.h"
#include "kimi/loopback_host.h"
#include "kimi/runtime.h"
#include "kimi/untrusted_json.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"
#include "tools/serve_protocol.h"

namespace kimi::tools {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kListenBacklog = 1024;
constexpr size_t kKeepAliveRequests = 10'000;

const std::vector<FlagSpec>& ServeFlags() {
  static const std::vector<FlagSpec> flags = {
      {"model", true, "DIR   model directory (weights and tokenizer)"},
      {"port", true, "P     TCP port; 0 picks a free one (the `listening` log line names it)"},
      {"host", true, "ADDR  address to listen on (default 127.0.0.1)"},
      {"served-model-name", true, "NAME  model id clients use (default: the --model argument, as vLLM does)"},
      {"threads", true, "N     kernel threads (default: one per hardware thread)"},
      {"max-num-seqs", true, "N     sequences running at once (default 32)"},
      {"max-num-batched-tokens", true, "N     tokens per scheduler step (default 256)"},
      {"memory-budget-mb", true, "N     sequence state budget in MiB (default 1024)"},
      {"default-max-tokens", true, "N     max_tokens of a request that names none (default 2048)"},
      {"max-connections", true, "N     connections served at once (default 128)"},
      {"keep-alive-timeout", true, "S     seconds an idle keep-alive connection stays open (default 5)"},
      {"help", false, "      this text"},
  };
  return flags;
}

struct ServeContext {
  ChatService* service = nullptr;
  std::string model_name;
  std::string model_dir;
};

void SendError(httplib::Response& res, const Status& status) {
  res.status = ErrorHttpStatus(status);
  res.set_content(ErrorJson(status).dump(), "application/json");
}

bool BoolField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// Checks the fields this worker answers for itself; the engine checks the rest in Start().
Status CheckBody(const Json& body, const std::string& model_name) {
  if (!body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  if (auto m = body.find("model"); m != body.end() && !(m->is_string() && m->get<std::string>() == model_name)) {
    return Status::NotFound("The model `" + (m->is_string() ? m->get<std::string>() : m->dump()) + "` does not exist.");
  }
  if (auto n = body.find("n"); n != body.end() && !(n->is_number_integer() && n->get<int64_t>() == 1)) {
    return Status::InvalidArgument("n: only 1 is supported");
  }
  return Status::OK();
}

// What a streaming response needs after its handler returned: the provider runs later, on
// the connection's thread.
struct StreamState {
  std::unique_ptr<ChatStream> stream;
  ChatEvent first;
  ChunkWriter writer;
};

void HandleGeneration(const ServeContext& ctx, ServingEndpoint endpoint, const httplib::Request& req,
                      httplib::Response& res) {
  Result<Json> parsed = ParseUntrustedJson<Json>(req.body, "the request body");
  if (!parsed.ok()) return SendError(res, Status::InvalidArgument(parsed.status().message()));
  Json body = std::move(*parsed);
  if (Status s = CheckBody(body, ctx.model_name); !s.ok()) return SendError(res, s);
  const bool stream = BoolField(body, "stream");
  const bool include_usage = body.contains("stream_options") && BoolField(body["stream_options"], "include_usage");

  Result<ServingRequest> request = ReadServingRequest(body, endpoint);
  if (!request.ok()) return SendError(res, request.status());
  ChatStartOptions start;
  // vLLM's field: requests share cached prompt prefixes only with requests of the same salt.
  if (auto salt = body.find("cache_salt"); salt != body.end() && !salt->is_null()) {
    if (!salt->is_string()) return SendError(res, Status::InvalidArgument("cache_salt must be a string"));
    start.prefix_cache_scope = PrefixCacheScope(salt->get_ref<const std::string&>());
  }
  Result<std::unique_ptr<ChatStream>> started = ctx.service->Start(*request, start);
  if (!started.ok()) return SendError(res, started.status());
  std::unique_ptr<ChatStream> chat = std::move(started).value();
  // The first event decides the status line: a refusal by the runtime is still an HTTP error.
  ChatEvent first;
  if (!chat->Next(&first)) return SendError(res, Status::Internal("generation ended without a result"));
  if (first.kind == ChatEvent::Kind::kError) return SendError(res, first.error);

  ResponseIdentity identity = NewResponseIdentity(ctx.model_name, endpoint);
  if (!stream) {
    ResponseBuilder builder(identity);
    ChatEvent e = std::move(first);
    do {
      if (e.kind == ChatEvent::Kind::kError) return SendError(res, e.error);
      builder.Add(e);
    } while (chat->Next(&e));
    res.set_content(builder.Build().dump(), "application/json");
    return;
  }

  auto state = std::make_shared<StreamState>(StreamState{std::move(chat), std::move(first), ChunkWriter(identity, include_usage)});
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [state](size_t, httplib::DataSink& sink) {
    auto write = [&sink](const std::string& frame) { return frame.empty() || sink.write(frame.data(), frame.size()); };
    auto client_gone = [&state] {
      state->stream->Cancel();  // frees the sequence at the runtime's next step
      return false;
    };
    if (!write(state->writer.RoleFrame())) return client_gone();
    ChatEvent e = std::move(state->first);
    do {
      switch (e.kind) {
        case ChatEvent::Kind::kOutput:
          if (!write(state->writer.OutputFrame(e))) return client_gone();
          break;
        case ChatEvent::Kind::kFinish:
          if (!write(state->writer.FinishFrames(e))) return client_gone();
          break;
        case ChatEvent::Kind::kError:
          write("data: " + Json{{"error", ErrorJson(e.error)}}.dump() + "\n\ndata: [DONE]\n\n");
          break;
      }
    } while (state->stream->Next(&e));
    sink.done();
    return true;
  });
}

Json ModelList(const ServeContext& ctx, int64_t context_length) {
  return Json{{"object", "list"},
              {"data", Json::array({Json{{"id", ctx.model_name},
                                         {"object", "model"},
                                         {"created", NewResponseIdentity(ctx.model_name).created},
                                         {"owned_by", "kimi-engine"},
                                         {"root", ctx.model_dir},
                                         {"max_model_len", context_length}}})}};
}

// The runtime's counters in the Prometheus text format, for the operator and for tests that
// check a disconnected client's sequence was freed.
std::string MetricsText(const RuntimeCounters& c) {
  struct Line {
    const char* name;
    const char* type;
    double value;
  };
  const Line lines[] = {
      {"kimi_engine_requests_running", "gauge", double(c.running)},
      {"kimi_engine_requests_waiting", "gauge", double(c.waiting)},
      {"kimi_engine_memory_budget_bytes", "gauge", double(c.memory_budget_bytes)},
      {"kimi_engine_memory_used_bytes", "gauge", double(c.memory_used_bytes)},
      {"kimi_engine_requests_finished_total", "counter", double(c.requests_finished)},
      {"kimi_engine_requests_cancelled_total", "counter", double(c.requests_cancelled)},
      {"kimi_engine_requests_refused_total", "counter", double(c.requests_refused)},
      {"kimi_engine_generation_tokens_total", "counter", double(c.tokens_generated)},
      {"kimi_engine_prompt_tokens_total", "counter", double(c.prompt_tokens_processed)},
      {"kimi_engine_preemptions_total", "counter", double(c.preemptions)},
  };
  std::string out;
  for (const Line& l : lines) {
    char value[64];
    std::snprintf(value, sizeof value, "%.17g", l.value);
    out += std::string("# TYPE ") + l.name + " " + l.type + "\n" + l.name + " " + value + "\n";
  }
  // The latency histograms, named as on the appliance's /metrics (docs/runtime.md).
  const std::pair<const char*, const LatencyHistogram*> histograms[] = {
      {"kimi_engine_time_to_first_token_seconds", &c.time_to_first_token},
      {"kimi_engine_inter_token_latency_seconds", &c.inter_token},
      {"kimi_engine_queue_time_seconds", &c.queue_time},
      {"kimi_engine_e2e_request_latency_seconds", &c.end_to_end},
  };
  for (const auto& [name, h] : histograms) {
    out += std::string("# TYPE ") + name + " histogram\n";
    int64_t cumulative = 0;
    for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
      cumulative += h->counts[i];
      char bound[32] = "+Inf";
      if (i < std::size(LatencyHistogram::kUpperBounds)) std::snprintf(bound, sizeof bound, "%g", LatencyHistogram::kUpperBounds[i]);
      out += std::string(name) + "_bucket{le=\"" + bound + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.17g", h->sum_seconds);
    out += std::string(name) + "_sum " + sum + "\n" + name + "_count " + std::to_string(h->count) + "\n";
  }
  return out;
}

Status Serve(const Flags& flags) {
  KIMI_ASSIGN_OR_RETURN(std::string dir, flags.Require("model"));
  KIMI_ASSIGN_OR_RETURN(std::string port_text, flags.Require("port"));
  KIMI_ASSIGN_OR_RETURN(uint64_t port, flags.GetUint("port", 0));
  if (port > 65535) return Status::InvalidArgument("--port must be at most 65535, got " + port_text);
  std::string host = flags.Get("host").value_or("127.0.0.1");
  ServeContext ctx;
  ctx.model_dir = dir;
  ctx.model_name = flags.Get("served-model-name").value_or(dir);

  ChatServiceOptions options;
  KIMI_ASSIGN_OR_RETURN(uint64_t threads, flags.GetUint("threads", 0));
  KIMI_ASSIGN_OR_RETURN(uint64_t max_seqs, flags.GetUint("max-num-seqs", 32));
  KIMI_ASSIGN_OR_RETURN(uint64_t max_batched, flags.GetUint("max-num-batched-tokens", 256));
  KIMI_ASSIGN_OR_RETURN(uint64_t budget_mb, flags.GetUint("memory-budget-mb", 1024));
  KIMI_ASSIGN_OR_RETURN(uint64_t default_max_tokens, flags.GetUint("default-max-tokens", 2048));
  KIMI_ASSIGN_OR_RETURN(uint64_t max_connections, flags.GetUint("max-connections", 128));
  if (max_connections < 1) return Status::InvalidArgument("--max-connections must be at least 1");
  KIMI_ASSIGN_OR_RETURN(uint64_t keep_alive_s, flags.GetUint("keep-alive-timeout", 5));
  if (keep_alive_s < 1 || keep_alive_s > 3600) {
    return Status::InvalidArgument("--keep-alive-timeout must be between 1 and 3600 seconds");
  }
  options.model.threads = int(threads);
  options.runtime.max_num_seqs = int(max_seqs);
  options.runtime.max_num_batched_tokens = int64_t(max_batched);
  options.runtime.memory_budget_bytes = budget_mb << 20;
  options.default_max_tokens = int64_t(default_max_tokens);

  log::Info("loading model", {{"model", dir}});
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<ChatService> service, ChatService::Open(dir, options));
  ctx.service = service.get();
  KIMI_ASSIGN_OR_RETURN(K3Config config, LoadK3Config(dir + "/config.json"));
  Json models = ModelList(ctx, config.max_position_embeddings);

  httplib::Server server;
  // cpp-httplib listens with a backlog of 5: a burst of concurrent clients (a gateway opening
  // its connections, 64 streams at once) overflows it and a dropped SYN costs a one-second
  // retransmit. The socket is caught here and listen() is called again below with room for
  // the burst (Linux applies a second listen() to the backlog). SO_REUSEADDR is what the
  // library's default socket options set.
  int listen_fd = -1;
  server.set_socket_options([&listen_fd](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = sock;
  });
  // Frames are written one token at a time: without TCP_NODELAY, Nagle's algorithm holds
  // small frames back for the peer's delayed ACK.
  server.set_tcp_nodelay(true);
  // Keep-alive connections from a gateway's pool are reused for many requests.
  server.set_keep_alive_max_count(kKeepAliveRequests);
  server.set_keep_alive_timeout(time_t(keep_alive_s));
  server.new_task_queue = [max_connections] { return new httplib::ThreadPool(size_t(max_connections)); };
  server.set_payload_max_length(64u << 20);
  // On loopback, a request for another host is a DNS-rebinding page's (kimi/loopback_host.h):
  // this worker has no credential to check, so that page could otherwise generate past the
  // appliance's keys, policy and audit log and read the answers.
  if (IsLoopbackListenAddress(host)) {
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value_count("Host") <= 1 && IsLoopbackSafeHost(req.get_header_value("Host"))) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      SendError(res, Status::PermissionDenied("a worker listening on loopback answers only requests addressed to an IP "
                                              "address or localhost (the Host header)"));
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server.Get("/v1/models", [&models](const httplib::Request&, httplib::Response& res) {
    res.set_content(models.dump(), "application/json");
  });
  server.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.set_content(MetricsText(ctx.service->Counters()), "text/plain; version=0.0.4");
  });
  server.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    HandleGeneration(ctx, ServingEndpoint::kChatCompletions, req, res);
  });
  server.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    HandleGeneration(ctx, ServingEndpoint::kCompletions, req, res);
  });

  int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, int(port)) ? int(port) : -1);
  if (bound <= 0) return Status::Unavailable("cannot listen on " + host + ":" + port_text);
  if (listen_fd >= 0 && ::listen(listen_fd, kListenBacklog) != 0) {
    return Status::Unavailable("cannot raise the listen backlog on " + host + ":" + port_text);
  }

  // Only this thread takes SIGINT/SIGTERM; the server's threads inherit the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::thread listener([&server] { server.listen_after_bind(); });
  log::Info("listening", {{"address", host + ":" + std::to_string(bound)}, {"model", ctx.model_name}});
  int received = 0;
  sigwait(&stop_signals, &received);
  log::Info("stopping", {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
  server.stop();
  listener.join();
  return Status::OK();
}

}  // namespace

int RunServe(const Args& args) {
  return RunWithFlags("serve", args, ServeFlags(),
                      "serve --model DIR --port P [--host 127.0.0.1] [--served-model-name NAME]", Serve);
}

}  // namespace kimi::tools
