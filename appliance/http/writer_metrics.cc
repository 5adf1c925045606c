#include "http/writer_metrics.h"

#include <utility>

namespace kimi::http {
namespace {

metrics::Counter& AddPlainCounter(metrics::Registry& registry, const char* name, const char* help) {
  return registry.AddCounter(name, help).WithLabels({});
}

}  // namespace

std::function<void()> UsageLedgerMetricsRefresher(metrics::Registry& registry,
                                                  std::function<auth::UsageLedgerStats()> stats) {
  metrics::Counter& requests = AddPlainCounter(registry, "kimi_usage_ledger_requests_total",
                                               "Finished requests whose tokens the usage ledger added to its keys' usage.");
  metrics::Counter& flushes = AddPlainCounter(registry, "kimi_usage_ledger_flushes_total",
                                              "Batch writes of the usage ledger to auth_usage that committed.");
  metrics::Counter& rows = AddPlainCounter(registry, "kimi_usage_ledger_rows_written_total",
                                           "Usage rows (a key's day or month) added to by those writes.");
  metrics::Counter& failures = AddPlainCounter(registry, "kimi_usage_ledger_failed_writes_total",
                                               "Batch writes of the usage ledger that failed (retried at the next interval).");
  return [&requests, &flushes, &rows, &failures, stats = std::move(stats)] {
    const auth::UsageLedgerStats s = stats();
    requests.RaiseTo(static_cast<double>(s.requests_added));
    flushes.RaiseTo(static_cast<double>(s.transactions));
    rows.RaiseTo(static_cast<double>(s.rows_written));
    failures.RaiseTo(static_cast<double>(s.failed_writes));
  };
}

std::function<void()> AuditWriterMetricsRefresher(metrics::Registry& registry,
                                                  std::function<std::optional<audit::AuditSinkStats>()> stats) {
  metrics::Counter& records = AddPlainCounter(registry, "kimi_audit_records_committed_total",
                                              "Audit records committed (synchronous=FULL) by the audit writer.");
  metrics::Counter& transactions = AddPlainCounter(registry, "kimi_audit_transactions_total",
                                                   "Audit writer transactions that committed (one fsync each; "
                                                   "records per transaction = the group commit's batch).");
  metrics::Counter& failed = AddPlainCounter(registry, "kimi_audit_failed_batches_total",
                                             "Audit writer transactions that failed (their requests were refused).");
  metrics::Counter& checkpoints = AddPlainCounter(registry, "kimi_audit_wal_checkpoints_total",
                                                  "Checkpoints of the audit database's write-ahead log, run by the "
                                                  "writer after acknowledging its commits.");
  return [&records, &transactions, &failed, &checkpoints, stats = std::move(stats)] {
    const std::optional<audit::AuditSinkStats> s = stats();
    if (!s.has_value()) return;
    records.RaiseTo(static_cast<double>(s->records_committed));
    transactions.RaiseTo(static_cast<double>(s->transactions));
    failed.RaiseTo(static_cast<double>(s->failed_batches));
    checkpoints.RaiseTo(static_cast<double>(s->wal_checkpoints));
  };
}

}  // namespace kimi::http
