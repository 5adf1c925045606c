#include "http/writer_metrics.h"

#include <sqlite3.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "audit/test_util.h"
#include "auth/test_auth_store.h"
#include "store/store.h"

namespace kimi::http {
namespace {

constexpr int64_t kDay = 1'796'083'200'000 - 86'400'000;  // 2026-11-30T00:00Z
constexpr int64_t kMonth = 1'793'491'200'000;              // 2026-11-01T00:00Z
constexpr int64_t kNeverOnItsOwn = 3'600'000;              // the test flushes by hand

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(UsageLedgerMetrics, ScrapesShowTheLedgersWritesAndFailures) {
  auth::TestAuthStore test_store;
  ASSERT_TRUE(test_store.status().ok()) << test_store.status().ToString();
  auto exec = [&](const char* sql) {
    return test_store.db()->Write([sql](sqlite3* db) { return store::Exec(db, sql); });
  };
  auth::UsageLedger ledger(test_store.store(), kNeverOnItsOwn);
  metrics::Registry registry;
  std::function<void()> refresh = UsageLedgerMetricsRefresher(registry, [&ledger] { return ledger.Stats(); });

  refresh();
  std::string text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "# TYPE kimi_usage_ledger_flushes_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_requests_total 0")) << text;

  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 5, 5).ok());
  ASSERT_TRUE(ledger.Add("key_b", kDay, kMonth, 1, 1).ok());
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 2, 2).ok());
  ASSERT_TRUE(ledger.Flush().ok());
  ASSERT_TRUE(exec("ALTER TABLE auth_usage RENAME TO auth_usage_away").ok());
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 1, 0).ok());
  EXPECT_FALSE(ledger.Flush().ok());
  ASSERT_TRUE(exec("ALTER TABLE auth_usage_away RENAME TO auth_usage").ok());

  refresh();
  text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_requests_total 4")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_flushes_total 1")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_rows_written_total 4")) << text;  // two keys' day and month
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_failed_writes_total 1")) << text;

  ASSERT_TRUE(ledger.Flush().ok());  // the failed write's usage, written now
  refresh();
  refresh();  // a second scrape with nothing new changes nothing
  text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_flushes_total 2")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_rows_written_total 6")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_usage_ledger_failed_writes_total 1")) << text;
}

TEST(AuditWriterMetrics, ScrapesShowCommitsTransactionsAndCheckpoints) {
  metrics::Registry registry;
  audit::testing::TempDir dir;
  Result<std::unique_ptr<audit::AuditSink>> opened = audit::AuditSink::Open(audit::testing::TestSinkOptions(dir.path()));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<audit::AuditSink> sink = std::move(opened).value();
  const audit::AuditSink* scraped = nullptr;  // as in the daemon: none until the log is open
  std::function<void()> refresh = AuditWriterMetricsRefresher(
      registry, [&scraped]() -> std::optional<audit::AuditSinkStats> {
        if (scraped == nullptr) return std::nullopt;
        return scraped->Stats();
      });
  refresh();
  std::string text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "kimi_audit_records_committed_total 0")) << text;
  scraped = sink.get();

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sink->Record(audit::testing::SampleRecord(i)).WaitCommitted().ok());
  refresh();
  text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "kimi_audit_records_committed_total 3")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_audit_transactions_total 3")) << text;  // each waited for alone
  EXPECT_TRUE(HasLine(text, "kimi_audit_failed_batches_total 0")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_audit_wal_checkpoints_total 0")) << text;

  // Records large enough to put over a thousand pages into the write-ahead log: the writer
  // checkpoints it once their commits are acknowledged.
  std::vector<audit::Ticket> tickets;
  for (int i = 0; i < 400; ++i) {
    audit::AuditRecord r = audit::testing::SampleRecord(100 + i);
    // Stored content, not the detail: audited text is bounded (audit/audit_text.h).
    r.content = audit::AuditContent{std::string(12'000, static_cast<char>('a' + i % 26)), ""};
    tickets.push_back(sink->Record(std::move(r)));
  }
  for (const audit::Ticket& t : tickets) ASSERT_TRUE(t.WaitCommitted().ok());
  for (int i = 0; i < 500 && sink->Stats().wal_checkpoints == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  refresh();
  text = registry.RenderText();
  EXPECT_TRUE(HasLine(text, "kimi_audit_records_committed_total 403")) << text;
  EXPECT_TRUE(HasLine(text, "kimi_audit_wal_checkpoints_total 1")) << text;
}

}  // namespace
}  // namespace kimi::http
