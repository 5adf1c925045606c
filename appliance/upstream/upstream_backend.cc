#include "upstream/upstream_backend.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "api/forward_body.h"
#include "kimi/log.h"
#include "upstream/chunk_normalizer.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_request.h"

namespace kimi::upstream {
namespace {

// An error body is read for its message only; a runaway one is cut here.
constexpr size_t kMaxErrorBodyBytes = 64 * 1024;
// A whole (non-streamed) JSON answer is held in memory; this bounds it.
constexpr size_t kMaxWholeBodyBytes = 64 * 1024 * 1024;
constexpr int64_t kHealthReadTimeoutMs = 5'000;
// Idle keep-alive connections kept per upstream (how long one may sit idle is the backend's
// keep_alive_ms).
constexpr size_t kMaxIdleConnections = 256;

void ApplyTimeouts(httplib::Client& client, const UpstreamOptions& o) {
  auto ms = [](int64_t v) { return std::chrono::milliseconds(v); };
  client.set_connection_timeout(ms(o.connect_timeout_ms));
  client.set_read_timeout(ms(o.timeout_ms));
  client.set_write_timeout(ms(o.timeout_ms));
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
  size_t events_emitted = 0;
  Status stream_error;

  Status EmitPending() {
    for (const api::StreamEvent& e : pending) {
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

  Status OnSseEvent(const SseEvent& event) {
    if (done) return Status::OK();
    if (event.data == "[DONE]") {
      done = true;
      return Status::OK();
    }
    return normalizer.ConsumeText(event.data, &pending);
  }
};

}  // namespace

namespace {
// httplib takes "http://host:port" only; the configuration also allows a trailing slash.
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

Status UpstreamBackend::CheckHealth() {
  std::lock_guard<std::mutex> probing(health_mu_);
  if (health_client_ == nullptr) {
    health_client_ = std::make_unique<httplib::Client>(options_.url);
    ApplyTimeouts(*health_client_, options_);
    // A probe needs no generation's patience: a server that cannot answer /health quickly is
    // not one to send requests to.
    health_client_->set_read_timeout(
        std::chrono::milliseconds(std::min<int64_t>(options_.timeout_ms, kHealthReadTimeoutMs)));
    health_client_->set_keep_alive(true);
  }
  httplib::Client& client = *health_client_;
  Status verdict = Status::OK();
  std::vector<std::string> served;
  if (httplib::Result health = client.Get("/health"); !health) {
    verdict = Status::Unavailable("GET /health: " + httplib::to_string(health.error()));
  } else if (health->status != 200) {
    verdict = Status::Unavailable("GET /health answered " + std::to_string(health->status));
  } else if (httplib::Result models = client.Get("/v1/models"); !models) {
    verdict = Status::Unavailable("GET /v1/models: " + httplib::to_string(models.error()));
  } else if (models->status != 200) {
    verdict = Status::Unavailable("GET /v1/models answered " + std::to_string(models->status));
  } else {
    nlohmann::json list = nlohmann::json::parse(models->body, nullptr, false);
    if (!list.is_object() || !list.contains("data") || !list["data"].is_array()) {
      verdict = Status::Unavailable("GET /v1/models: not a model list");
    } else {
      for (const auto& m : list["data"]) {
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

Status UpstreamBackend::StartExchange(const std::string& request_bytes, std::unique_ptr<HttpConnection>* connection,
                                      ResponseHead* head) {
  // An idle connection the server has closed in the meantime shows it at the peek, or by
  // answering nothing at all: then the request was not taken and goes out once more, on a new
  // connection.
  std::unique_ptr<HttpConnection> reused = connections_.TakeIdle();
  while (reused != nullptr && !reused->StillIdle()) reused = connections_.TakeIdle();
  if (reused != nullptr) {
    Status sent = reused->Send(request_bytes);
    if (sent.ok()) sent = reused->ReadHead(head);
    if (sent.ok()) {
      *connection = std::move(reused);
      return Status::OK();
    }
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
  const bool chat = request.endpoint == api::Endpoint::kChatCompletions;
  nlohmann::ordered_json body = UpstreamBody(api::ForwardBody(request), options_.upstream_model);
  if (options_.send_priority) body["priority"] = request.priority;
  const std::string request_bytes =
      RequestBytes(chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), request.request_id);

  std::unique_ptr<HttpConnection> connection;
  ResponseHead head;
  KIMI_RETURN_IF_ERROR(StartExchange(request_bytes, &connection, &head));

  Exchange x;
  x.sink = &sink;
  bool stopped = false;
  if (head.status != 200 || !IsEventStream(head.content_type)) {
    // An error's body, or a whole JSON answer from an upstream that ignored `stream: true`.
    const size_t cap = head.status == 200 ? kMaxWholeBodyBytes : kMaxErrorBodyBytes;
    Status read = connection->ReadBody(
        head,
        [&](std::string_view data) {
          x.error_body.append(data.substr(0, cap - std::min(cap, x.error_body.size())));
          return true;
        },
        &stopped);
    if (read.ok() && connection->Reusable()) connections_.Release(std::move(connection));
    if (head.status != 200) {
      nlohmann::json error_json = nlohmann::json::parse(x.error_body, nullptr, false);
      if (error_json.is_discarded()) error_json = nlohmann::json{{"message", x.error_body}};
      return UpstreamErrorStatus(error_json, head.status, options_.name);
    }
    KIMI_RETURN_IF_ERROR(Silence(read));
    nlohmann::json whole = nlohmann::json::parse(x.error_body, nullptr, false);
    if (whole.is_discarded()) return Status::Corruption("upstream " + options_.name + " answered neither SSE nor JSON");
    KIMI_RETURN_IF_ERROR(x.normalizer.Consume(whole, &x.pending));
  } else {
    SseParser parser([&x](const SseEvent& e) { return x.OnSseEvent(e); });
    // The events of one read go to the client together, after the whole read is parsed.
    Status read = connection->ReadBody(
        head,
        [&](std::string_view data) {
          Status fed = parser.Feed(data);
          if (!fed.ok()) {
            x.stream_error = fed;
            return false;  // closes the connection: the upstream aborts the generation
          }
          return x.EmitPending().ok();
        },
        &stopped);
    // Only a connection whose exchange ended cleanly is reused; any other is closed here.
    if (read.ok() && !stopped && x.done && connection->Reusable()) connections_.Release(std::move(connection));
    connection.reset();
    if (x.client_gone) return Status::Cancelled("the client went away; upstream request closed");
    if (!x.stream_error.ok()) return x.stream_error;
    if (!read.ok()) {
      Status failed = Silence(read);
      if (failed.code() == Status::Code::kUnavailable && x.events_emitted > 0) {
        return Status::Unavailable(failed.message() + " (mid-stream)");
      }
      return failed;
    }
    if (parser.Finish() && !x.done) {
      log::Debug("upstream stream ended inside an event", {{"backend", options_.name}});
    }
  }
  KIMI_RETURN_IF_ERROR(x.normalizer.Finish(&x.pending).WithContext("upstream " + options_.name));
  return x.EmitPending();
}

}  // namespace kimi::upstream
