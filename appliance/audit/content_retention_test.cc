// The content policy and the purge at the retention age: content goes, records, digests and
// the tree stay verifiable.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "audit/audit_sink.h"
#include "audit/content_policy.h"
#include "audit/export_verifier.h"
#include "audit/log_export.h"
#include "audit/log_verifier.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::SampleRecord;
using testing::TempDir;

constexpr int64_t kDayMs = 24 * 60 * 60 * 1000;
constexpr int64_t kStartMs = 1'790'000'000'000;

TEST(ContentPolicy, ContentIsDroppedUnlessThePolicyStoresIt) {
  const AuditContent text{"the prompt", "the answer"};
  AuditRecord off = SampleRecord(0);
  off.content_sha256 = "stale";
  ApplyContentPolicy(AuditContentPolicy{}, text, &off);
  EXPECT_FALSE(off.content.has_value());
  EXPECT_TRUE(off.content_sha256.empty());

  AuditRecord on = SampleRecord(0);
  ApplyContentPolicy(AuditContentPolicy{true, 30}, text, &on);
  ASSERT_TRUE(on.content.has_value());
  EXPECT_EQ(on.content->prompt, "the prompt");
  NormalizeRecord(&on);
  EXPECT_EQ(on.content_sha256.size(), 64u);
}

TEST(ContentPolicy, CutoffIsTheRetentionAgeBeforeNow) {
  EXPECT_EQ(ContentRetentionCutoffMs({true, 0}, kStartMs), kStartMs);
  EXPECT_EQ(ContentRetentionCutoffMs({true, 7}, kStartMs), kStartMs - 7 * kDayMs);
  EXPECT_EQ(ContentRetentionCutoffMs({true, -3}, kStartMs), kStartMs);
}

// A sink whose clock the test moves.
struct ClockedSink {
  explicit ClockedSink(const std::string& dir) : now(std::make_shared<std::atomic<int64_t>>(kStartMs)) {
    AuditSinkOptions o = testing::TestSinkOptions(dir);
    o.clock_ms = [clock = now] { return clock->load(); };
    sink = std::move(AuditSink::Open(o)).value();
  }
  std::shared_ptr<std::atomic<int64_t>> now;
  std::unique_ptr<AuditSink> sink;
};

AuditRecord WithContent(int i, int64_t time_ms) {
  AuditRecord r = SampleRecord(i);
  r.time_ms = time_ms;
  ApplyContentPolicy({true, 10}, AuditContent{"prompt " + std::to_string(i), "completion " + std::to_string(i)}, &r);
  return r;
}

TEST(ContentRetention, PurgeBlanksOnlyExpiredContentAndEverythingStillVerifies) {
  TempDir dir;
  ClockedSink s(dir.path());
  // Records 0..2 older than ten days, 3..5 younger.
  for (int i = 0; i < 6; ++i) {
    const int64_t age_days = i < 3 ? 13 - i : 2;
    ASSERT_TRUE(s.sink->Record(WithContent(i, kStartMs - age_days * kDayMs)).WaitCommitted().ok());
  }
  ASSERT_TRUE(s.sink->SignHeadNow().ok());
  Result<int64_t> purged = s.sink->PurgeExpiredContent({true, 10});
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(*purged, 3);  // records 0, 1 and 2
  // Purging again finds nothing more.
  EXPECT_EQ(*s.sink->PurgeExpiredContent({true, 10}), 0);
  const PublicKey key = s.sink->public_key();
  ASSERT_TRUE(s.sink->Close().ok());

  AuditStoreOptions ro;
  ro.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), ro)).value();
  for (uint64_t seq = 0; seq < 6; ++seq) {
    Result<std::optional<StoredRecord>> row = store->ReadRecord(seq);
    ASSERT_TRUE(row.ok() && row->has_value());
    EXPECT_EQ((*row)->record.content.has_value(), seq >= 3) << seq;
    EXPECT_EQ((*row)->record.content_sha256.size(), 64u) << "the digest stays: " << seq;
  }
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << (report->problems.empty() ? "" : report->problems.front());

  // An export taken after the purge verifies too: purged records carry only the digest.
  ExportOptions o;
  o.with_proofs = true;
  std::stringstream bundle;
  ASSERT_TRUE(ExportAuditLog(*store, o, bundle).ok());
  Result<BundleReport> checked = VerifyExportBundle(bundle, key);
  ASSERT_TRUE(checked.ok());
  EXPECT_TRUE(checked->ok()) << (checked->problems.empty() ? "" : checked->problems.front());
  EXPECT_EQ(checked->records, 6u);
}

TEST(ContentRetention, TheWriterPurgesOnItsOwnGivenAPolicy) {
  TempDir dir;
  AuditSinkOptions o = testing::TestSinkOptions(dir.path());
  o.clock_ms = [] { return kStartMs; };
  o.content_retention = AuditContentPolicy{true, 1};
  o.purge_interval_ms = 10;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(o)).value();
  ASSERT_TRUE(sink->Record(WithContent(0, kStartMs - 2 * kDayMs)).WaitCommitted().ok());  // expired
  ASSERT_TRUE(sink->Record(WithContent(1, kStartMs)).WaitCommitted().ok());                // kept
  AuditStoreOptions ro;
  ro.read_only = true;
  const auto content_of = [&](uint64_t seq) {
    std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), ro)).value();
    return (*store->ReadRecord(seq))->record.content.has_value();
  };
  bool purged = false;
  for (int i = 0; i < 500 && !purged; ++i) {  // bounded wait for the writer's next round
    purged = !content_of(0);
    if (!purged) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(purged);
  EXPECT_TRUE(content_of(1));
  ASSERT_TRUE(sink->Close().ok());
}

TEST(ContentRetention, EditedContentIsDetectedWhilePurgedContentIsNot) {
  TempDir dir;
  ClockedSink s(dir.path());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s.sink->Record(WithContent(i, kStartMs - (5 - i) * kDayMs)).WaitCommitted().ok());
  const PublicKey key = s.sink->public_key();
  ASSERT_TRUE(s.sink->Close().ok());
  testing::TamperSql(dir.File("audit.db"), "UPDATE audit_content SET completion = 'rewritten' WHERE seq = 1");
  AuditStoreOptions ro;
  ro.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), ro)).value();
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->first_bad_seq, 1u);
}

}  // namespace
}  // namespace kimi::audit
