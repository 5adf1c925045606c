#include "audit/audit_sink.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "audit/log_verifier.h"
#include "audit/merkle.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::SampleRecord;
using testing::TempDir;
using testing::TestSinkOptions;

std::unique_ptr<AuditStore> OpenReader(const TempDir& dir) {
  AuditStoreOptions o;
  o.read_only = true;
  Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(dir.File("audit.db"), o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Polls cond for up to ~20 s; a bound against hanging, not a timing assertion.
bool Eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 2000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

TEST(AuditSink, CommitsDenseSequenceAndSurvivesReopen) {
  TempDir dir;
  Hash root_before{};
  {
    Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    for (int i = 0; i < 10; ++i) {
      Ticket t = (*sink)->Record(SampleRecord(i));
      ASSERT_TRUE(t.WaitCommitted().ok());
      EXPECT_EQ(t.seq(), static_cast<uint64_t>(i));
    }
    EXPECT_EQ((*sink)->TreeSize(), 10u);
    EXPECT_TRUE((*sink)->Healthy());
    Result<SignedTreeHead> head = (*sink)->SignHeadNow();
    ASSERT_TRUE(head.ok());
    root_before = head->root_hash;
    EXPECT_TRUE((*sink)->Close().ok());
  }
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  EXPECT_EQ((*sink)->TreeSize(), 10u);
  Ticket t = (*sink)->Record(SampleRecord(10));
  ASSERT_TRUE(t.WaitCommitted().ok());
  EXPECT_EQ(t.seq(), 10u);
  const PublicKey key = (*sink)->public_key();
  ASSERT_TRUE((*sink)->Close().ok());

  auto store = OpenReader(dir);
  ASSERT_NE(store, nullptr);
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->records, 11u);
  EXPECT_EQ(report->covered_size, 11u);  // Close() signed the final head
  Result<std::vector<Hash>> leaves = RecomputeLeafHashes(*store, 10);
  ASSERT_TRUE(leaves.ok());
  EXPECT_EQ(TreeRoot(*leaves), root_before);
}

// A log removed while its key stays: the next start refuses instead of opening an empty log
// that verifies (every earlier record gone unnoticed).
TEST(AuditSink, AMissingLogWithItsKeyPresentRefusesToOpen) {
  TempDir dir;
  {
    Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_TRUE((*sink)->Record(SampleRecord(0)).WaitCommitted().ok());
    ASSERT_TRUE((*sink)->Close().ok());
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(dir.path() + "/audit.db" + suffix);
  Result<std::unique_ptr<AuditSink>> reopened = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(reopened.status().message().find("is missing or empty, but"), std::string::npos)
      << reopened.status().ToString();
}

// The installer makes the audit key before any log exists: the key alone is no sign of a lost log.
TEST(AuditSink, AKeyMadeBeforeTheLogOpensANewLog) {
  TempDir dir;
  ASSERT_TRUE(AuditKey::LoadOrCreate(dir.path()).ok());
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  (*sink)->Close();
}

// A log removed (or replaced) while the daemon runs: no record is written into the removed file;
// each one fails (the request's 503) and the sink turns unhealthy.
TEST(AuditSink, ALogRemovedWhileOpenFailsEveryLaterRecord) {
  TempDir dir;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  ASSERT_TRUE((*sink)->Record(SampleRecord(0)).WaitCommitted().ok());
  std::filesystem::rename(dir.path() + "/audit.db", dir.path() + "/moved.db");
  const Status after = (*sink)->Record(SampleRecord(1)).WaitCommitted();
  EXPECT_EQ(after.code(), Status::Code::kUnavailable) << after.ToString();
  EXPECT_NE(after.message().find("removed or replaced"), std::string::npos) << after.ToString();
  EXPECT_FALSE((*sink)->Healthy());
  (*sink)->Close();
}

TEST(AuditSink, ManyConcurrentProducersAllCommitDenselyAndVerify) {
  TempDir dir;
  constexpr int kThreads = 16;
  constexpr int kPerThread = 150;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok());
  std::vector<std::vector<uint64_t>> seqs(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        AuditRecord r = SampleRecord(t * kPerThread + i);
        Ticket ticket = (*sink)->Record(std::move(r));
        if (!ticket.WaitCommitted().ok()) {
          ++failures;
          continue;
        }
        seqs[t].push_back(ticket.seq());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<uint64_t> all;
  for (const auto& s : seqs) {
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));  // one producer's records keep their order
    all.insert(all.end(), s.begin(), s.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i);
  const PublicKey key = (*sink)->public_key();
  ASSERT_TRUE((*sink)->Close().ok());

  auto store = OpenReader(dir);
  ASSERT_NE(store, nullptr);
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->covered_size, all.size());
  // Every request id arrived exactly once.
  std::set<std::string> ids;
  ASSERT_TRUE(store->ScanRecords({}, [&](StoredRecord& row) {
    ids.insert(row.record.request_id);
    return Status::OK();
  }).ok());
  EXPECT_EQ(ids.size(), all.size());
}

TEST(AuditSink, RecordsQueuedWithinTheCommitWindowShareOneTransaction) {
  TempDir dir;
  AuditSinkOptions options = TestSinkOptions(dir.path());
  // A window far longer than the test: only a full batch may end it, so the grouping is
  // deterministic.
  options.commit_window_ms = 600'000;
  options.max_batch = 5;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(options);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  std::vector<Ticket> tickets;
  for (int i = 0; i < 5; ++i) tickets.push_back((*sink)->Record(SampleRecord(i)));
  for (const Ticket& t : tickets) ASSERT_TRUE(t.WaitCommitted().ok());
  EXPECT_EQ((*sink)->Stats().transactions, 1u);
  EXPECT_EQ((*sink)->Stats().records_committed, 5u);
  EXPECT_EQ((*sink)->TreeSize(), 5u);
  // Close() commits what is pending without waiting for the window.
  Ticket last = (*sink)->Record(SampleRecord(5));
  EXPECT_TRUE((*sink)->Close().ok());
  EXPECT_TRUE(last.WaitCommitted().ok());
}

TEST(AuditSink, FullDatabaseFailsTicketsAndTurnsUnhealthy) {
  TempDir dir;
  AuditSinkOptions options = TestSinkOptions(dir.path());
  options.store.max_page_count = 12;  // a few KiB: the "disk" fills after some records
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(options);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  Status last;
  int committed = 0;
  for (int i = 0; i < 5000 && last.ok(); ++i) {
    AuditRecord r = SampleRecord(i);
    r.detail = std::string(300, 'x');
    last = (*sink)->Record(std::move(r)).WaitCommitted();
    if (last.ok()) ++committed;
  }
  ASSERT_FALSE(last.ok()) << "the database never filled up";
  EXPECT_EQ(last.code(), Status::Code::kUnavailable);
  EXPECT_FALSE((*sink)->Healthy());
  EXPECT_NE((*sink)->Reason().find("ResourceExhausted"), std::string::npos) << (*sink)->Reason();
  // The disk is still full for a record of that size.
  AuditRecord again = SampleRecord(1);
  again.detail = std::string(300, 'y');
  EXPECT_FALSE((*sink)->Record(std::move(again)).WaitCommitted().ok());
  EXPECT_FALSE((*sink)->Healthy());
  EXPECT_EQ((*sink)->TreeSize(), static_cast<uint64_t>(committed));
  const PublicKey key = (*sink)->public_key();
  (*sink)->Close();

  // What was committed before the failure is intact.
  auto store = OpenReader(dir);
  ASSERT_NE(store, nullptr);
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->records, static_cast<uint64_t>(committed));
}

TEST(AuditSink, LockedDatabaseFailsClosedThenRecovers) {
  TempDir dir;
  AuditSinkOptions options = TestSinkOptions(dir.path());
  options.store.busy_timeout_ms = 50;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(options);
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Record(SampleRecord(0)).WaitCommitted().ok());

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("audit.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const Status blocked = (*sink)->Record(SampleRecord(1)).WaitCommitted();
  EXPECT_EQ(blocked.code(), Status::Code::kUnavailable);
  EXPECT_FALSE((*sink)->Healthy());
  EXPECT_FALSE((*sink)->Reason().empty());

  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  EXPECT_TRUE(Eventually([&] { return (*sink)->Healthy(); })) << (*sink)->Reason();
  Ticket t = (*sink)->Record(SampleRecord(2));
  ASSERT_TRUE(t.WaitCommitted().ok());
  EXPECT_EQ(t.seq(), 1u);  // the failed record took no sequence number
  ASSERT_TRUE((*sink)->Close().ok());
}

TEST(AuditSink, PurgingContentKeepsTheLogVerifiable) {
  TempDir dir;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE((*sink)->Record(SampleRecord(i)).WaitCommitted().ok());
  Result<int64_t> purged = (*sink)->PurgeContentBefore(SampleRecord(6).time_ms);
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 2);  // records 1 and 5 carried content
  const PublicKey key = (*sink)->public_key();
  ASSERT_TRUE((*sink)->Close().ok());
  auto store = OpenReader(dir);
  ASSERT_NE(store, nullptr);
  Result<std::optional<StoredRecord>> r1 = store->ReadRecord(1);
  ASSERT_TRUE(r1.ok() && r1->has_value());
  EXPECT_FALSE((*r1)->record.content.has_value());
  EXPECT_FALSE((*r1)->record.content_sha256.empty());
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
}

TEST(AuditSink, KilledWriterLosesNoCommittedRecord) {
  TempDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child commits 25 records, each acknowledged, then dies without closing: no final
    // signed head, no orderly shutdown.
    Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
    if (!sink.ok()) ::_exit(3);
    for (int i = 0; i < 25; ++i) {
      if (!(*sink)->Record(SampleRecord(i)).WaitCommitted().ok()) ::_exit(4);
    }
    ::kill(::getpid(), SIGKILL);
    ::_exit(5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  EXPECT_EQ((*sink)->TreeSize(), 25u);
  const PublicKey key = (*sink)->public_key();
  ASSERT_TRUE((*sink)->Close().ok());
  auto store = OpenReader(dir);
  ASSERT_NE(store, nullptr);
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->covered_size, 25u);  // Open() covered the crash tail with a new head
}

TEST(AuditSink, RecordAfterCloseFails) {
  TempDir dir;
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Close().ok());
  EXPECT_EQ((*sink)->Record(SampleRecord(0)).WaitCommitted().code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace kimi::audit
