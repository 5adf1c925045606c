// GET /admin/v1/metrics/history (permission metrics.read: admin, operator, auditor): the
// daemon's figures over a time range for the console's dashboards, from the history the daemon
// keeps in memory (metrics/history.h), as rates per second, error shares and latency
// percentiles per interval, and per served model (docs/admin-api.yaml).
//
// Thread safety: the handler may run on many threads at once; MetricsHistory is thread-safe.
#pragma once

#include <cstdint>
#include <functional>

#include "http/routes.h"

namespace kimi::metrics {
class MetricsHistory;
}  // namespace kimi::metrics

namespace kimi::admin {

struct MetricsHistoryServices {
  const metrics::MetricsHistory* history = nullptr;  // null: the route answers 503
  std::function<int64_t()> now_ms;                   // Unix milliseconds; empty: the system clock
};

void AddMetricsRoutes(http::RouteTable& table, MetricsHistoryServices services);

}  // namespace kimi::admin
