// UpstreamBackend: an api::Backend served by a remote OpenAI-compatible server, either a
// `kimi-engine serve` worker or a vLLM server (one node, or the head of a multi-node
// tensor/expert-parallel deployment: see docs/operations.md).
//
// A request is forwarded as one streaming POST /v1/chat/completions in vLLM's dialect
// (upstream_request.h), or POST /v1/completions for the completions endpoint; the SSE reply is parsed (sse_parser.h) and normalised
// (chunk_normalizer.h) into StreamEvents delivered to the sink as they arrive. When the sink
// reports the client gone, the upstream connection is closed at once, which makes vLLM and
// `kimi-engine serve` abort the generation.
//
// Before anything is sent, the body is searched for the text of a control token of Kimi's
// tokenizer or chat format, which the server would read as markup (markup_guard.h): such a
// caller's text is InvalidArgument, the caller's error, and no connection is made; the outcome's
// decision says so ("not sent: markup in the caller's text").
//
// Errors before the first event: connection refused or timed out -> Unavailable; the
// upstream's 4xx -> InvalidArgument with its message (429 -> ResourceExhausted); its 5xx ->
// Unavailable; no byte within timeout_ms, or the request past request_timeout_ms ->
// DeadlineExceeded; bytes outside the protocol (an event that is not JSON, a chunk of the
// wrong shape, broken framing) -> BadGateway. The router retries only those that happen
// before the first event.
//
// A hostile or broken upstream holds nothing longer than its request: the client leaving is
// noticed between events too (the sink's canceller interrupts the connection, also during
// pings or silence); after [DONE] nothing more is read; output past the request's max_tokens
// (each event with text is at least a token) ends the stream with finish_reason "length".
//
// Health: CheckHealth() asks GET /health and GET /v1/models; the backend is healthy for a
// model when both answered and the upstream lists the model. With health_interval_ms > 0 a
// thread repeats the check; a refused connection during a request marks it unhealthy until
// the next check passes.
//
// Connections: Generate() reads its stream with HttpConnection (http_connection.h: a blocking
// read per chunk, no poll before it) and keeps them alive in a ConnectionPool
// (connection_pool.h); one whose exchange did not end cleanly (an error, a departed client) is
// closed, never reused. The events parsed from one read go to the sink together, in order.
// The health probe uses an HttpConnection of its own, each probe bounded as a whole.
// Public header of upstream/: other folders include it.
// Owns: the health thread, the last health verdict and the idle connections.
// Thread safety: Generate(), Healthy() and Models() may be called from any thread at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/backend.h"
#include "kimi/status.h"
#include "upstream/connection_pool.h"
#include "upstream/http_connection.h"

namespace kimi::upstream {

struct UpstreamOptions {
  std::string name;                 // "upstream:<config name>" in metrics and audit records
  std::string url;                  // "http://host:port", no path
  std::vector<std::string> models;  // model ids clients use; empty: whatever /v1/models lists
  std::string upstream_model;       // the name sent upstream, "" to forward the client's
  int64_t connect_timeout_ms = 2'000;
  // Longest wait for the first byte, then for each event (keep-alive comments are not events);
  // a whole answer or error body within it of its head; each health probe within min(it, 5 s).
  int64_t timeout_ms = 60'000;
  // Longest whole request, from the send to the last byte; 0: no bound but the silence above.
  // An upstream that keeps its response going (pings, output without end) is cut here.
  int64_t request_timeout_ms = 0;
  int64_t health_interval_ms = 0;   // 0: no health thread (call CheckHealth())
  // An idle pooled connection older than this is closed instead of reused: a second under the
  // 5 s keep-alive timeout of vLLM's uvicorn and of kimi-engine serve by default; 0: no reuse.
  int64_t keep_alive_ms = 4'000;
  // Send BackendRequest::priority as vLLM's `priority` (lower runs sooner); off by default,
  // since a server not started with --scheduling-policy priority refuses the field.
  bool send_priority = false;
  // Send BackendRequest::prefix_cache_scope, hashed, as vLLM's `cache_salt`: the server's prefix
  // cache then serves a cached prompt prefix only to requests of the same caller. Off by
  // default, since servers that do not know the field may refuse it.
  bool send_cache_salt = false;
};

class UpstreamBackend final : public api::Backend {
 public:
  // Starts the health thread when asked for; the first check runs on it at once.
  explicit UpstreamBackend(UpstreamOptions options);
  ~UpstreamBackend() override;
  UpstreamBackend(const UpstreamBackend&) = delete;
  UpstreamBackend& operator=(const UpstreamBackend&) = delete;

  std::string_view name() const override { return options_.name; }
  std::vector<std::string> Models() const override;
  bool Healthy(std::string_view model) const override;
  Status Generate(const api::BackendRequest& request, api::EventSink& sink, api::BackendOutcome* outcome) override;

  // One health check now; returns why the upstream is unhealthy, or OK.
  Status CheckHealth();

 private:
  void HealthLoop();
  std::string Probe(const std::string& path, std::string* body);  // requires health_mu_
  void MarkUnhealthy(const std::string& reason);
  std::string UpstreamModelFor(std::string_view model) const;
  std::string RequestBytes(std::string_view path, const std::string& body, const std::string& request_id) const;
  // Told each connection an exchange is about to use (nullptr once it lets it go), so that a
  // canceller on another thread can interrupt it.
  using WatchConnection = std::function<void(HttpConnection*)>;
  // The bytes of the request to send for `request`, or the caller's error (markup_guard.h).
  Result<std::string> RequestFor(const api::BackendRequest& request) const;
  // Generate() without its wording of the outcome: sends `request_bytes` (RequestFor(request)).
  Status Forward(const api::BackendRequest& request, const std::string& request_bytes, api::EventSink& sink,
                 std::chrono::steady_clock::time_point deadline, const WatchConnection& watch);
  // Sends the request on a kept-alive connection, or a new one, and reads the response head.
  Status StartExchange(const std::string& request_bytes, std::chrono::steady_clock::time_point deadline,
                       const WatchConnection& watch, std::unique_ptr<HttpConnection>* connection,
                       ResponseHead* head);
  Status Silence(const Status& read) const;

  const UpstreamOptions options_;
  const Result<HttpAddress> address_;            // options_.url, parsed
  ConnectionPool<HttpConnection> connections_;  // keep-alive connections for Generate()

  mutable std::mutex mu_;
  bool healthy_ = false;                     // guarded by mu_
  std::vector<std::string> served_models_;   // guarded by mu_: ids from the last /v1/models
  std::string unhealthy_reason_ = "not checked yet";  // guarded by mu_

  // The health probe's keep-alive connection: a check every few hundred ms would otherwise
  // open and close two connections each time.
  std::mutex health_mu_;
  std::unique_ptr<HttpConnection> health_connection_;  // guarded by health_mu_

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread health_thread_;
};

}  // namespace kimi::upstream
