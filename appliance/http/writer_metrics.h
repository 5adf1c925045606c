// The background writers on /metrics: the audit log's writer (records committed, their
// transactions, failed batches, write-ahead log checkpoints; audit/audit_sink.h) and the usage
// ledger's writer (finished requests added, batch writes (flushes) committed, usage rows they
// added to, failed writes; auth/usage_ledger.h). Each writer keeps its counters itself; they
// are copied into the registry when /metrics is scraped, so the request path pays nothing.
// Public header of http/: other folders include it.
// Owns nothing but the series it registers. Thread safety: a refresher returned may be called
// from any thread, one call at a time (the /metrics handler's before-render hook).
#pragma once

#include <functional>

#include "audit/audit_sink.h"
#include "auth/usage_ledger.h"
#include "metrics/metrics.h"

namespace kimi::http {

// Registers the kimi_usage_ledger_* counters in `registry` and returns the function that
// brings them up to `stats()`. Both arguments must outlive the function returned.
std::function<void()> UsageLedgerMetricsRefresher(metrics::Registry& registry,
                                                  std::function<auth::UsageLedgerStats()> stats);

// The same for the audit writer's kimi_audit_* counters. `stats()` answers nullopt while no
// audit log is open (the counters stay as they are).
std::function<void()> AuditWriterMetricsRefresher(metrics::Registry& registry,
                                                  std::function<std::optional<audit::AuditSinkStats>()> stats);

}  // namespace kimi::http
