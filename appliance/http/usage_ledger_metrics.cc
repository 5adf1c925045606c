#include "http/usage_ledger_metrics.h"

#include <utility>

namespace kimi::http {
namespace {

// Counters only go up: add what the ledger counted since the last scrape.
void CatchUp(metrics::Counter& counter, uint64_t total) {
  const double delta = static_cast<double>(total) - counter.Value();
  if (delta > 0) counter.Increment(delta);
}

}  // namespace

std::function<void()> UsageLedgerMetricsRefresher(metrics::Registry& registry,
                                                  std::function<auth::UsageLedgerStats()> stats) {
  auto counter = [&registry](const char* name, const char* help) -> metrics::Counter& {
    return registry.AddCounter(name, help).WithLabels({});
  };
  metrics::Counter& requests = counter("kimi_usage_ledger_requests_total",
                                       "Finished requests whose tokens the usage ledger added to its keys' usage.");
  metrics::Counter& flushes = counter("kimi_usage_ledger_flushes_total",
                                      "Batch writes of the usage ledger to auth_usage that committed.");
  metrics::Counter& rows = counter("kimi_usage_ledger_rows_written_total",
                                   "Usage rows (a key's day or month) added to by those writes.");
  metrics::Counter& failures = counter("kimi_usage_ledger_failed_writes_total",
                                       "Batch writes of the usage ledger that failed (retried at the next interval).");
  return [&requests, &flushes, &rows, &failures, stats = std::move(stats)] {
    const auth::UsageLedgerStats s = stats();
    CatchUp(requests, s.requests_added);
    CatchUp(flushes, s.transactions);
    CatchUp(rows, s.rows_written);
    CatchUp(failures, s.failed_writes);
  };
}

}  // namespace kimi::http
