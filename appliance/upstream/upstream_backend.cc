#include "upstream/upstream_backend.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <utility>

#include "api/forward_body.h"
#include "api/prompt_estimate.h"
#include "kimi/log.h"
#include "kimi/runtime.h"
#include "kimi/untrusted_json.h"
#include "upstream/chunk_normalizer.h"
#include "upstream/markup_guard.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_request.h"

namespace kimi::upstream {
namespace {

// An error body is read for its message only; a runaway one is cut here.
constexpr size_t kMaxErrorBodyBytes = 64 * 1024;
// A whole (non-streamed) JSON answer is held in memory; this bounds it.
constexpr size_t kMaxWholeBodyBytes = 64 * 1024 * 1024;
constexpr int64_t kHealthReadTimeoutMs = 5'000;
// The probe's answers are read up to this (a model list of thousands of ids fits); a longer
// one fails the check instead of growing in memory for as long as the upstream sends.
constexpr size_t kMaxProbeBodyBytes = 1 << 20;
// Idle keep-alive connections kept per upstream (how long one may sit idle is the backend's
// keep_alive_ms).
constexpr size_t kMaxIdleConnections = 256;

// The longest token of Kimi's vocabulary, in bytes (data/kimi-k3/tiktoken.model): a text of
// N bytes holds at least N / 256 tokens, however an upstream packs it into events.
constexpr int64_t kMaxTokenBytes = 256;

// The fewest tokens an event can stand for: each with text (or a call's name) is at least one,
// and at least its bytes over the longest token. An upstream's events carry no count of their own.
int64_t TokensAtLeast(const api::StreamEvent& e) {
  const int64_t bytes = static_cast<int64_t>(e.text.size() + e.tool_name.size());
  if (bytes == 0 && e.kind != api::StreamEventKind::kToolCallBegin) return 0;
  return std::max<int64_t>(1, (bytes + kMaxTokenBytes - 1) / kMaxTokenBytes);
}

bool IsEventStream(const std::string& content_type) {
  return content_type.find("text/event-stream") != std::string::npos;
}

// State of one forwarded request, touched only by the thread running Generate().
struct Exchange {
  api::EventSink* sink = nullptr;
  ChunkNormalizer normalizer;
  std::vector<api::StreamEvent> pending;
  std::string error_body;   // 4xx/5xx body, or a whole JSON answer
  bool done = false;        // "data: [DONE]" arrived
  bool client_gone = false;
  // The fewest tokens the events sent so far can hold (TokensAtLeast). Past the request's
  // max_tokens (when it set one) the upstream ignored the bound, and the stream ends there;
  // a finish that reports fewer completion tokens than this is corrected up to it.
  int64_t max_tokens = -1;
  int64_t sent_tokens = 0;
  bool cut_at_length = false;
  const ServingRequest* request = nullptr;  // for the estimate of a prompt count left out
  size_t events_emitted = 0;
  Status stream_error;

  Status EmitPending() {
    for (api::StreamEvent& e : pending) {
      if (e.kind == api::StreamEventKind::kFinish) {
        // Counts that can be charged: an upstream that reports no usage, or less than it
        // sent, is not thereby free. A missing prompt count is the router's and quotas' estimate.
        e.usage.completion_tokens = std::max(e.usage.completion_tokens, sent_tokens);
        if (e.usage.prompt_tokens == 0) e.usage.prompt_tokens = api::EstimatePromptTokens(*request);
      } else if (const int64_t tokens = TokensAtLeast(e); tokens > 0) {
        if (max_tokens >= 0 && sent_tokens + tokens > max_tokens) {
          cut_at_length = true;
          break;
        }
        sent_tokens += tokens;
      }
      if (!sink->Emit(e)) {
        client_gone = true;
        pending.clear();
        return Status::Cancelled("the client went away");
      }
      ++events_emitted;
    }
    pending.clear();
    return Status::OK();
  }

  // Ends the stream at max_tokens (cut_at_length): what was pending past it is dropped.
  Status FinishAtLength() {
    pending.clear();
    normalizer.FinishAtLength(sent_tokens, &pending);
    return EmitPending();
  }

  Status OnSseEvent(const SseEvent& event) {
    if (done) return Status::OK();
    if (event.data == "[DONE]") {
      done = true;
      return Status::OK();
    }
    return normalizer.ConsumeText(event.data, &pending);
  }
};

// Lets another thread end the exchange (EventSink::SetCanceller): the client left while the
// upstream sent nothing the sink would see (pings, silence, a response never ended), which an
// Emit() would not notice. It interrupts the connection being used, which Generate() names
// with Watch() before it sends on it and clears before it lets the connection go.
class ExchangeCanceller {
 public:
  void Watch(HttpConnection* connection) {
    std::lock_guard<std::mutex> lock(mu_);
    connection_ = connection;
    if (cancelled_ && connection_ != nullptr) connection_->Interrupt();
  }
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    if (connection_ != nullptr) connection_->Interrupt();
  }
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

 private:
  mutable std::mutex mu_;
  HttpConnection* connection_ = nullptr;  // guarded by mu_
  bool cancelled_ = false;                // guarded by mu_
};

}  // namespace

namespace {
// The URL as "http://host:port"; the configuration also allows a trailing slash.
UpstreamOptions WithoutTrailingSlash(UpstreamOptions options) {
  while (!options.url.empty() && options.url.back() == '/') options.url.pop_back();
  return options;
}
}  // namespace

UpstreamBackend::UpstreamBackend(UpstreamOptions options)
    : options_(WithoutTrailingSlash(std::move(options))),
      address_(ParseHttpUrl(options_.url)),
      connections_(kMaxIdleConnections, std::chrono::milliseconds(options_.keep_alive_ms)) {
  if (options_.health_interval_ms > 0) health_thread_ = std::thread([this] { HealthLoop(); });
}

UpstreamBackend::~UpstreamBackend() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (health_thread_.joinable()) health_thread_.join();
}

void UpstreamBackend::HealthLoop() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    CheckHealth();
    lock.lock();
    stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.health_interval_ms), [this] { return stopping_; });
  }
}

// GET `path` on the probe's kept-alive connection (a new one when it has none, or when the
// server had closed the idle one), the whole exchange within kHealthReadTimeoutMs so that an
// upstream trickling its answer cannot hold the check (or the daemon's stop, which joins it).
// "" with *body on 200, else why not.
std::string UpstreamBackend::Probe(const std::string& path, std::string* body) {
  if (!address_.ok()) return address_.status().message();
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + address_->host_header +
                              "\r\nAccept: application/json\r\n\r\n";
  const int64_t limit_ms = std::min<int64_t>(options_.timeout_ms, kHealthReadTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    const bool reused = health_connection_ != nullptr;
    if (!reused) {
      Result<std::unique_ptr<HttpConnection>> opened =
          HttpConnection::Open(*address_, options_.connect_timeout_ms, limit_ms);
      if (!opened.ok()) return "GET " + path + ": " + opened.status().message();
      health_connection_ = std::move(opened).value();
    }
    HttpConnection& connection = *health_connection_;
    connection.SetDeadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms));
    ResponseHead head;
    Status read = connection.Send(request);
    if (read.ok()) read = connection.ReadHead(&head);
    if (!read.ok() && reused && !connection.received_any() && attempt == 0) {
      health_connection_.reset();  // closed while idle: once more on a new connection
      continue;
    }
    body->clear();
    bool over_cap = false, stopped = false;
    if (read.ok()) {
      read = connection.ReadBody(
          head,
          [&](std::string_view data) {
            over_cap = data.size() > kMaxProbeBodyBytes - body->size();
            if (!over_cap) body->append(data);
            return !over_cap;
          },
          &stopped);
    }
    if (!read.ok() || stopped || !connection.Reusable()) health_connection_.reset();
    if (over_cap) return "GET " + path + ": answer over " + std::to_string(kMaxProbeBodyBytes) + " bytes";
    if (!read.ok()) return "GET " + path + ": " + read.message();
    if (head.status != 200) return "GET " + path + " answered " + std::to_string(head.status);
    return "";
  }
}

Status UpstreamBackend::CheckHealth() {
  std::lock_guard<std::mutex> probing(health_mu_);
  std::string body;
  Status verdict = Status::OK();
  std::vector<std::string> served;
  if (std::string failed = Probe("/health", &body); !failed.empty()) {
    verdict = Status::Unavailable(failed);
  } else if (failed = Probe("/v1/models", &body); !failed.empty()) {
    verdict = Status::Unavailable(failed);
  } else {
    const Result<nlohmann::json> list = ParseUntrustedJson(body, "GET /v1/models");
    if (!list.ok() || !list->is_object() || !list->contains("data") || !(*list)["data"].is_array()) {
      verdict = Status::Unavailable("GET /v1/models: not a model list");
    } else {
      for (const auto& m : (*list)["data"]) {
        if (m.is_object() && m.contains("id") && m["id"].is_string()) served.push_back(m["id"].get<std::string>());
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (verdict.ok() != healthy_) {
    if (verdict.ok()) log::Info("upstream healthy", {{"backend", options_.name}, {"url", options_.url}});
    else log::Warn("upstream unhealthy", {{"backend", options_.name}, {"reason", verdict.message()}});
  }
  healthy_ = verdict.ok();
  if (verdict.ok()) served_models_ = std::move(served);
  unhealthy_reason_ = verdict.ok() ? "" : verdict.message();
  return verdict;
}

void UpstreamBackend::MarkUnhealthy(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (healthy_) log::Warn("upstream unhealthy", {{"backend", options_.name}, {"reason", reason}});
  healthy_ = false;
  unhealthy_reason_ = reason;
}

std::vector<std::string> UpstreamBackend::Models() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!healthy_) return {};
  return options_.models.empty() ? served_models_ : options_.models;
}

std::string UpstreamBackend::UpstreamModelFor(std::string_view model) const {
  return options_.upstream_model.empty() ? std::string(model) : options_.upstream_model;
}

bool UpstreamBackend::Healthy(std::string_view model) const {
  if (!options_.models.empty() &&
      std::find(options_.models.begin(), options_.models.end(), model) == options_.models.end()) {
    return false;
  }
  std::string wanted = UpstreamModelFor(model);
  std::lock_guard<std::mutex> lock(mu_);
  return healthy_ && std::find(served_models_.begin(), served_models_.end(), wanted) != served_models_.end();
}

// The request as it goes on the wire: one write for head and body.
std::string UpstreamBackend::RequestBytes(std::string_view path, const std::string& body,
                                          const std::string& request_id) const {
  std::string out;
  out.reserve(256 + body.size());
  out.append("POST ").append(path).append(" HTTP/1.1\r\nHost: ").append(address_.ok() ? address_->host_header : "");
  out.append("\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n");
  if (!request_id.empty()) out.append("X-Request-Id: ").append(request_id).append("\r\n");
  out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n").append(body);
  return out;
}

Status UpstreamBackend::StartExchange(const std::string& request_bytes, std::chrono::steady_clock::time_point deadline,
                                      const WatchConnection& watch, std::unique_ptr<HttpConnection>* connection,
                                      ResponseHead* head) {
  // An idle connection the server has closed in the meantime shows it at the peek, or by
  // answering nothing at all: then the request was not taken and goes out once more, on a new
  // connection.
  std::unique_ptr<HttpConnection> reused = connections_.TakeIdle();
  while (reused != nullptr && !reused->StillIdle()) reused = connections_.TakeIdle();
  if (reused != nullptr) {
    reused->SetDeadline(deadline);
    watch(reused.get());
    Status sent = reused->Send(request_bytes);
    if (sent.ok()) sent = reused->ReadHead(head);
    if (sent.ok()) {
      *connection = std::move(reused);
      return Status::OK();
    }
    watch(nullptr);
    if (reused->received_any() || sent.code() == Status::Code::kDeadlineExceeded) return Silence(sent);
    log::Debug("kept-alive upstream connection was closed; sending on a new one",
               {{"backend", options_.name}, {"error", sent.message()}});
  }
  if (!address_.ok()) return address_.status();
  Result<std::unique_ptr<HttpConnection>> opened =
      HttpConnection::Open(*address_, options_.connect_timeout_ms, options_.timeout_ms);
  if (!opened.ok()) {
    MarkUnhealthy(opened.status().message());
    return Status::Unavailable("upstream " + options_.name + " at " + options_.url +
                               " is unreachable: " + opened.status().message());
  }
  *connection = std::move(opened).value();
  (*connection)->SetDeadline(deadline);
  watch(connection->get());
  KIMI_RETURN_IF_ERROR(Silence((*connection)->Send(request_bytes)));
  return Silence((*connection)->ReadHead(head));
}

// The backend's wording of a reader's error: a timeout names the upstream and its limit.
Status UpstreamBackend::Silence(const Status& read) const {
  if (read.ok()) return read;
  if (read.code() == Status::Code::kDeadlineExceeded) {
    return Status::DeadlineExceeded("upstream " + options_.name + " sent nothing for " +
                                    std::to_string(options_.timeout_ms) + " ms");
  }
  if (read.code() == Status::Code::kUnavailable) {
    return Status::Unavailable("upstream " + options_.name + " connection failed: " + read.message());
  }
  return Status::Unavailable("upstream " + options_.name + ": " + read.message());
}

Status UpstreamBackend::Generate(const api::BackendRequest& request, api::EventSink& sink,
                                 api::BackendOutcome* outcome) {
  if (outcome != nullptr) {
    outcome->backend = options_.name;
    outcome->attempts = 1;
  }
  Result<std::string> request_bytes = RequestFor(request);
  if (!request_bytes.ok()) {
    // The caller's error, found before any connection; the client's message names the field and
    // the token, the audit record's route decision (bounded) only what happened.
    if (outcome != nullptr) outcome->decision = "not sent: markup in the caller's text";
    return request_bytes.status();
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = options_.request_timeout_ms > 0 ? start + std::chrono::milliseconds(options_.request_timeout_ms)
                                                        : std::chrono::steady_clock::time_point::max();
  ExchangeCanceller canceller;
  Status forwarded;
  {
    const api::CancelWhileRegistered cancel_on_hang_up(sink, [&canceller] { canceller.Cancel(); });
    forwarded = Forward(request, *request_bytes, sink, deadline,
                        [&canceller](HttpConnection* connection) { canceller.Watch(connection); });
  }
  if (forwarded.ok()) return forwarded;
  if (canceller.cancelled()) return Status::Cancelled("the client went away; upstream request closed");
  if (forwarded.code() == Status::Code::kDeadlineExceeded && std::chrono::steady_clock::now() >= deadline) {
    return Status::DeadlineExceeded("upstream " + options_.name + " did not finish within its request timeout of " +
                                    std::to_string(options_.request_timeout_ms) + " ms");
  }
  // Bytes the protocol does not allow are the upstream's fault, never the client's nor ours.
  if (forwarded.code() == Status::Code::kCorruption) {
    return Status::BadGateway("upstream " + options_.name + " answered outside the protocol: " + forwarded.message());
  }
  return forwarded;
}

Result<std::string> UpstreamBackend::RequestFor(const api::BackendRequest& request) const {
  const bool chat = request.endpoint == api::Endpoint::kChatCompletions;
  nlohmann::ordered_json body = UpstreamBody(api::ForwardBody(request), options_.upstream_model);
  if (options_.send_priority) body["priority"] = request.priority;
  if (options_.send_cache_salt && !request.prefix_cache_scope.empty()) {
    body["cache_salt"] = std::to_string(PrefixCacheScope(request.prefix_cache_scope));
  }
  // The server tokenises the caller's texts with its markup: a token's text typed by the caller
  // never leaves (markup_guard.h).
  KIMI_RETURN_IF_ERROR(CheckNoControlTokens(body, KimiControlTokens()));
  return RequestBytes(chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), request.request_id);
}

Status UpstreamBackend::Forward(const api::BackendRequest& request, const std::string& request_bytes,
                                api::EventSink& sink, std::chrono::steady_clock::time_point deadline,
                                const WatchConnection& watch) {
  std::unique_ptr<HttpConnection> connection;
  // Declared after the connection, so run before it is destroyed: the canceller never holds a
  // connection that is gone, nor one given back to the pool (LetGo).
  struct Unwatch {
    const WatchConnection& watch;
    ~Unwatch() { watch(nullptr); }
  } unwatch{watch};
  // Only a connection whose exchange ended cleanly goes back to the pool; any other is closed.
  auto let_go = [&](bool exchange_ended) {
    watch(nullptr);
    if (exchange_ended && connection->Reusable()) connections_.Release(std::move(connection));
    connection.reset();
  };
  ResponseHead head;
  KIMI_RETURN_IF_ERROR(StartExchange(request_bytes, deadline, watch, &connection, &head));

  Exchange x;
  x.sink = &sink;
  if (request.serving.generation.max_tokens) x.max_tokens = *request.serving.generation.max_tokens;
  x.request = &request.serving;
  bool stopped = false;
  if (head.status != 200 || !IsEventStream(head.content_type)) {
    // An error's body, or a whole JSON answer from an upstream that ignored `stream: true`:
    // both are written at once, so the whole body has timeout_ms from its head, and what
    // passes the cap is not read on (an error's message is what fits).
    connection->SetDeadline(std::min(deadline, std::chrono::steady_clock::now() +
                                                   std::chrono::milliseconds(options_.timeout_ms)));
    const size_t cap = head.status == 200 ? kMaxWholeBodyBytes : kMaxErrorBodyBytes;
    bool over_cap = false;
    Status read = connection->ReadBody(
        head,
        [&](std::string_view data) {
          over_cap = data.size() > cap - x.error_body.size();
          x.error_body.append(data.substr(0, cap - x.error_body.size()));
          return !over_cap;
        },
        &stopped);
    let_go(read.ok() && !stopped);
    if (head.status != 200) {
      Result<nlohmann::json> error_json = ParseUntrustedJson(x.error_body, "upstream error");
      return UpstreamErrorStatus(error_json.ok() ? *error_json : nlohmann::json{{"message", x.error_body}}, head.status,
                                 options_.name);
    }
    KIMI_RETURN_IF_ERROR(Silence(read));
    if (over_cap) return Status::Corruption("a whole answer over " + std::to_string(kMaxWholeBodyBytes) + " bytes");
    Result<nlohmann::json> whole = ParseUntrustedJson(x.error_body, "the answer (not an event stream)");
    if (!whole.ok()) return whole.status();
    KIMI_RETURN_IF_ERROR(x.normalizer.Consume(*whole, &x.pending));
  } else {
    SseParser parser([&x](const SseEvent& e) { return x.OnSseEvent(e); });
    bool data_after_done = false;
    // timeout_ms bounds the time without an event, not only without a byte: keep-alive
    // comments (or events that carry nothing) do not hold a request that makes no progress.
    const auto no_progress_limit = std::chrono::milliseconds(options_.timeout_ms);
    auto last_progress = std::chrono::steady_clock::now();
    // The events of one read go to the client together, after the whole read is parsed.
    Status read = connection->ReadBody(
        head,
        [&](std::string_view data) {
          // Only the end of the body may follow [DONE]: an upstream that keeps sending (pings,
          // more events) is not waited for.
          if (x.done) {
            data_after_done = true;
            return false;
          }
          Status fed = parser.Feed(data);
          const size_t emitted_before = x.events_emitted;
          // The events before a failure in the same read still reach the client (and its count).
          if (!x.EmitPending().ok()) return false;
          if (!fed.ok()) {
            x.stream_error = fed;
            return false;  // closes the connection: the upstream aborts the generation
          }
          if (x.cut_at_length) return false;
          const auto now = std::chrono::steady_clock::now();
          if (x.events_emitted > emitted_before) {
            last_progress = now;
          } else if (now - last_progress > no_progress_limit) {
            x.stream_error = Status::DeadlineExceeded("upstream " + options_.name + " sent no event for " +
                                                      std::to_string(options_.timeout_ms) + " ms");
            return false;
          }
          return true;
        },
        &stopped);
    let_go(read.ok() && !stopped && x.done);
    if (x.client_gone) return Status::Cancelled("the client went away; upstream request closed");
    if (!x.stream_error.ok()) return x.stream_error;
    if (!read.ok()) {
      Status failed = Silence(read);
      if (failed.code() == Status::Code::kUnavailable && x.events_emitted > 0) {
        return Status::Unavailable(failed.message() + " (mid-stream)");
      }
      return failed;
    }
    if (data_after_done) {
      log::Debug("upstream sent data after [DONE]; connection closed", {{"backend", options_.name}});
    }
    if (x.cut_at_length) {
      log::Warn("upstream exceeded the request's max_tokens; its stream was cut",
                {{"backend", options_.name}, {"request_id", request.request_id}});
      return x.FinishAtLength();
    }
    if (parser.Finish() && !x.done) {
      log::Debug("upstream stream ended inside an event", {{"backend", options_.name}});
    }
  }
  KIMI_RETURN_IF_ERROR(x.normalizer.Finish(&x.pending).WithContext("upstream " + options_.name));
  KIMI_RETURN_IF_ERROR(x.EmitPending());
  return x.cut_at_length ? x.FinishAtLength() : Status::OK();
}

}  // namespace kimi::upstream
