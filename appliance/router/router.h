// Router: the api::Backend the API handlers call. It chooses, per request, one of several
// backends (the embedded engine, `kimi-engine serve` workers, vLLM servers) and runs the
// request there.
//
// Choice: among the backends that serve the request's model, are healthy for it, and whose
// circuit breaker admits a request, the one with the fewest outstanding tokens (the estimated
// prompt + max_tokens of the requests it is running), ties to the earlier in the
// configuration. Retry: a request that failed before its first event, with an error that
// another backend may not share (unreachable, 5xx, timeout, overloaded), goes to the next
// best backend, up to max_attempts; once an event reached the client nothing is retried,
// since the client already holds part of an answer. Client errors (the upstream's 4xx) are
// final at once. Per-backend request_timeout_ms bounds a whole request: past it the backend
// is told the client went away (it cancels) and the request ends DeadlineExceeded.
//
// What it shows: /metrics families (see docs/operations.md) kimi_router_requests_total
// {backend,outcome}, kimi_router_retries_total{backend}, kimi_router_outstanding_tokens
// {backend}, kimi_router_inflight_requests{backend}, kimi_router_breaker_state{backend}
// (0 closed, 1 open, 2 half-open), kimi_router_breaker_opens_total{backend},
// kimi_router_unroutable_total{reason}; and BackendOutcome::decision, one line for the
// audit record saying what was chosen among what and what was retried.
//
// Owns: the backends (shared), their breakers and load counters.
// Thread safety: Generate() runs on many threads at once; the rest is read-only after
// construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/backend.h"
#include "metrics/metrics.h"
#include "router/circuit_breaker.h"

namespace kimi::router {

struct RoutedBackend {
  std::shared_ptr<api::Backend> backend;
  int64_t request_timeout_ms = 0;  // whole-request bound; 0: none
};

struct RouterOptions {
  int max_attempts = 2;                // backends tried for one request, first try included
  int breaker_failure_threshold = 3;   // consecutive failures that open a backend's breaker
  int64_t breaker_cooldown_ms = 10'000;
  int64_t default_max_tokens = 4096;   // for the load estimate when the body names none
  std::function<int64_t()> now_ms;     // monotonic milliseconds; null: steady_clock
  // Called on the request's thread when a backend fails a request (unreachable, 5xx, timeout):
  // its name, the error, and whether that failure opened its circuit breaker. May be empty;
  // the daemon keeps the last one for /readyz (component "router").
  std::function<void(const std::string& backend, const Status& error, bool breaker_opened)> on_backend_failure;
};

// The load a request adds to a backend until it ends: its prompt estimated from the size of
// its texts as JSON (about four bytes a token for the text and tool declarations) plus its
// max_tokens.
int64_t EstimateRequestTokens(const ServingRequest& request, int64_t default_max_tokens);

class Router final : public api::Backend {
 public:
  // `metrics` may be null (no /metrics families). Preconditions: backend names are unique.
  Router(std::vector<RoutedBackend> backends, RouterOptions options, metrics::Registry* metrics);
  ~Router() override;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  std::string_view name() const override { return "router"; }
  std::vector<std::string> Models() const override;     // union, in configuration order
  bool Healthy(std::string_view model) const override;  // some backend would take it now
  // "no backend can take model M now: embedded (not serving), upstream:w (breaker open)".
  std::string UnavailableReason(std::string_view model) const override;
  Status Generate(const api::BackendRequest& request, api::EventSink& sink, api::BackendOutcome* outcome) override;

  BreakerState breaker_state(std::string_view backend) const;
  int64_t outstanding_tokens(std::string_view backend) const;

 private:
  struct Slot;
  std::string SlotState(const Slot& slot, std::string_view model, int64_t now, bool* admits) const;
  Slot* Choose(const std::string& model, const std::vector<Slot*>& excluded, std::string* considered);
  int64_t Now() const;

  RouterOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  metrics::Family<metrics::Counter>* requests_ = nullptr;
  metrics::Family<metrics::Counter>* retries_ = nullptr;
  metrics::Family<metrics::Counter>* unroutable_ = nullptr;
  metrics::Family<metrics::Counter>* breaker_opens_ = nullptr;
};

}  // namespace kimi::router
