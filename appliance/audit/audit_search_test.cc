// The auditors' search in the store: order, partial match (LIKE with % and _ taken
// literally), the key-id list of a key name or owner filter, and the action list.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::SampleRecord;
using testing::TempDir;
using testing::TestSinkOptions;

// Records 0..7 with targets and actors chosen to tell LIKE's wildcards from literal text.
AuditRecord Made(int i) {
  AuditRecord r = SampleRecord(i);
  const char* targets[] = {"100%_done", "100x_done", "100%xdone", "plain", "A_B", "aXb", "back\\slash", "backxslash"};
  r.target = targets[i];
  r.actor = i < 4 ? "key_alpha" : "Key_Beta";
  r.action = i % 2 == 0 ? "model.activate" : "auth.login";
  return r;
}

class AuditSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir_.path()));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    for (int i = 0; i < 8; ++i) ASSERT_TRUE((*sink)->Record(Made(i)).WaitCommitted().ok());
    ASSERT_TRUE((*sink)->Close().ok());
    AuditStoreOptions o;
    o.read_only = true;
    Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(dir_.File("audit.db"), o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  // The seqs of the records of Made() the query finds (the sink's own records have other actors).
  std::vector<uint64_t> Find(RecordQuery q) {
    std::vector<uint64_t> seqs;
    EXPECT_TRUE(store_
                    ->ScanRecords(q,
                                  [&](StoredRecord& row) {
                                    if (row.record.actor == "key_alpha" || row.record.actor == "Key_Beta") {
                                      seqs.push_back(row.record.seq);
                                    }
                                    return Status::OK();
                                  })
                    .ok());
    return seqs;
  }

  // The seq of Made(i) in the log.
  uint64_t SeqOf(int i) {
    RecordQuery q;
    q.request_id = SampleRecord(i).request_id;
    std::vector<uint64_t> seqs = Find(q);
    EXPECT_EQ(seqs.size(), 1u);
    return seqs.empty() ? 0 : seqs[0];
  }

  TempDir dir_;
  std::unique_ptr<AuditStore> store_;
};

TEST_F(AuditSearchTest, NewestFirstIsTheReverseOfOldestFirst) {
  RecordQuery oldest;
  std::vector<uint64_t> up = Find(oldest);
  ASSERT_EQ(up.size(), 8u);
  RecordQuery newest;
  newest.newest_first = true;
  std::vector<uint64_t> down = Find(newest);
  std::reverse(down.begin(), down.end());
  EXPECT_EQ(down, up);
  // A limited page from the newest: the last two records.
  newest.action = "model.activate";
  newest.limit = 2;
  EXPECT_EQ(Find(newest), (std::vector<uint64_t>{SeqOf(6), SeqOf(4)}));
  Result<std::string> plan = store_->ExplainScan(newest);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->find("USING INDEX audit_records_action"), std::string::npos) << *plan;
  EXPECT_EQ(plan->find("TEMP B-TREE"), std::string::npos) << *plan;  // the index read backwards
}

TEST_F(AuditSearchTest, PartialMatchTakesPercentAndUnderscoreLiterally) {
  RecordQuery q;
  q.contains = "100%_";
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(0)}));  // not 100x_done nor 100%xdone
  q.contains = "A_B";
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(4)}));  // not aXb
  q.contains = "back\\slash";
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(6)}));
  q.contains = "%";
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(0), SeqOf(2)}));
  q.contains = "'; DROP TABLE audit_records; --";  // bound, never SQL
  EXPECT_TRUE(Find(q).empty());
  EXPECT_EQ(Find(RecordQuery()).size(), 8u);
}

TEST_F(AuditSearchTest, PartialMatchIsCaseInsensitiveOverActorRequestIdAndTarget) {
  RecordQuery q;
  q.contains = "KEY_BETA";
  EXPECT_EQ(Find(q).size(), 4u);
  q.contains = "PLAIN";
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(3)}));
  q.contains = SampleRecord(5).request_id;
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(5)}));
  q.contains = "client-2";  // the X-Request-Id a client sent
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(2), SeqOf(7)}));
  // Or the actor is one of the keys the caller found by name or owner.
  q.contains = "nowhere in the records";
  q.contains_actors = {"key_alpha"};
  EXPECT_EQ(Find(q).size(), 4u);
}

TEST_F(AuditSearchTest, AnActorListFindsTheRecordsOfThoseKeysOnly) {
  RecordQuery q;
  q.actor_in = std::vector<std::string>{"Key_Beta", "key_nobody"};
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(4), SeqOf(5), SeqOf(6), SeqOf(7)}));
  q.actor_in = std::vector<std::string>{};  // a name no key has: nothing, not everything
  EXPECT_TRUE(Find(q).empty());
  q.actor_in = std::vector<std::string>{"key_alpha"};
  q.action = "auth.login";
  q.newest_first = true;
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(3), SeqOf(1)}));
}

TEST_F(AuditSearchTest, ASeqRangeBoundsAPartialMatch) {
  RecordQuery q;
  q.contains = "done";
  q.from_seq = SeqOf(1);
  q.to_seq = SeqOf(2) + 1;
  EXPECT_EQ(Find(q), (std::vector<uint64_t>{SeqOf(1), SeqOf(2)}));
}

TEST_F(AuditSearchTest, DistinctActionsListsEachActionOnce) {
  Result<std::vector<std::string>> actions = store_->DistinctActions();
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  EXPECT_TRUE(std::is_sorted(actions->begin(), actions->end()));
  EXPECT_EQ(std::count(actions->begin(), actions->end(), "model.activate"), 1);
  EXPECT_EQ(std::count(actions->begin(), actions->end(), "auth.login"), 1);
  Result<uint64_t> next = store_->NextSeq();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, SeqOf(7) + 1);
}

}  // namespace
}  // namespace kimi::audit
