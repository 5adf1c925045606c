// AnonymousRecordBudget: how many requests made without a principal (a wrong or missing key on
// a protected route, a malformed request, a failed sign-in) get an audit record of their own.
// Every such request costs its sender nothing, while each record stays in audit.db for good:
// unbounded, a client without any credential grows the log until the disk fills, and then the
// fail-closed log refuses every request.
//
// Two per-minute budgets (token buckets, auth/rate_limiter.h): one per client address and one
// for all addresses. A request over either is counted instead of recorded: per address and HTTP
// status, at most max_sources such pairs apart and the rest together under kManySources. A count becomes one
// summary once window_ms has passed since its first request (TakeDue, which the auditor's
// flusher calls every window_ms / 4 and every recorded request calls too), or at stop (TakeAll).
// So every such request is in the log, one by one or in a count, and they add at most
//   per_minute + (max_sources + s) · 60'000 / window_ms
// records a minute (s: the statuses the refusals had; about 1,200 + 70 · 6 with the defaults),
// however many addresses send them. A count not yet written when the process dies is lost:
// the counted requests of at most the last window_ms + window_ms / 4.
//
// Thread safety: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/rate_limiter.h"

namespace kimi::http {

struct AnonymousRecordBudgetOptions {
  int64_t per_source_per_minute = 120;  // 0: no bound per address
  int64_t per_minute = 1'200;           // 0: no bound for all addresses together
  int64_t window_ms = 10'000;           // a count is summarised this long after its first request
  size_t max_sources = 64;              // addresses counted apart; the rest under kManySources
  size_t max_tracked = 65'536;          // per-address buckets kept before full ones are forgotten
};

// The count's source when it gathers the requests of many addresses.
inline constexpr std::string_view kManySources = "*";

// Requests counted instead of recorded: from `source` (an address without its port, or
// kManySources), answered http_status, `count` of them between first_ms and last_ms (Unix
// milliseconds).
struct CountedRequests {
  std::string source;
  int http_status = 0;
  int64_t count = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
};

class AnonymousRecordBudget {
 public:
  explicit AnonymousRecordBudget(AnonymousRecordBudgetOptions options) : options_(options) {}

  // True: the request from `peer` ("127.0.0.1:4000", "[::1]:4000") gets its own record, one
  // spent from both budgets. False: it is counted with the others answered http_status.
  bool Admit(std::string_view peer, int http_status, int64_t now_ms);
  // The counts whose window has passed, taken out. Cheap when none is due.
  std::vector<CountedRequests> TakeDue(int64_t now_ms);
  // Every count, taken out (the stop).
  std::vector<CountedRequests> TakeAll();

  const AnonymousRecordBudgetOptions& options() const { return options_; }

 private:
  std::vector<CountedRequests> Take(int64_t due_before_ms);

  const AnonymousRecordBudgetOptions options_;
  auth::RateLimiter sources_;
  auth::RateLimiter all_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, CountedRequests> counts_;  // guarded by mu_; by source, status
  std::atomic<int64_t> next_due_ms_{INT64_MAX};                  // the earliest count's due time
};

}  // namespace kimi::http
