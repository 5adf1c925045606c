// The usage ledger's writer on /metrics: how many finished requests it was given, how many
// batch writes (flushes) committed, how many usage rows they added to and how many writes
// failed (auth/usage_ledger.h). The ledger keeps these counters itself; they are copied into
// the registry when /metrics is scraped, so the request path pays nothing for them.
//
// Owns nothing but the series it registers. Thread safety: the refresher returned may be
// called from any thread, one call at a time (the /metrics handler's before-render hook).
#pragma once

#include <functional>

#include "auth/usage_ledger.h"
#include "http/metrics.h"

namespace kimi::http {

// Registers the kimi_usage_ledger_* counters in `registry` and returns the function that
// brings them up to `stats()`. Both arguments must outlive the function returned.
std::function<void()> UsageLedgerMetricsRefresher(metrics::Registry& registry,
                                                  std::function<auth::UsageLedgerStats()> stats);

}  // namespace kimi::http
