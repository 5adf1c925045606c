#include "audit/audit_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::TempDir;

std::unique_ptr<AuditStore> OpenStore(const std::string& path, bool read_only) {
  AuditStoreOptions o;
  o.read_only = read_only;
  Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(path, o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// A query with one exact-match filter, a time range and a cursor, as the search route builds.
RecordQuery Filtered(const std::string& column, const std::string& value) {
  RecordQuery q;
  q.from_seq = 3;                              // cursor
  q.since_ms = 1'790'000'000'000 + 2'000;      // time range
  q.until_ms = 1'790'000'000'000 + 40'000;
  q.limit = 5;
  if (column == "actor") q.actor = value;
  if (column == "action") q.action = value;
  if (column == "model") q.model = value;
  if (column == "outcome") q.outcome = value;
  if (column == "request_id") q.request_id = value;
  if (column == "client_request_id") q.client_request_id = value;
  return q;
}

std::vector<uint64_t> Seqs(AuditStore& store, const RecordQuery& q) {
  std::vector<uint64_t> seqs;
  EXPECT_TRUE(store
                  .ScanRecords(q,
                               [&](StoredRecord& row) {
                                 seqs.push_back(row.record.seq);
                                 return Status::OK();
                               })
                  .ok());
  return seqs;
}

class SearchIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { BuildLog(dir_.path(), 48, {}); }
  TempDir dir_;
};

TEST_F(SearchIndexTest, EveryFilterIsServedByItsIndex) {
  std::unique_ptr<AuditStore> store = OpenStore(dir_.File("audit.db"), /*read_only=*/true);
  ASSERT_NE(store, nullptr);
  for (const char* column : {"actor", "action", "model", "outcome", "request_id", "client_request_id"}) {
    Result<std::string> plan = store->ExplainScan(Filtered(column, "x"));
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_NE(plan->find(std::string("USING INDEX audit_records_") + column), std::string::npos)
        << column << ":\n" << *plan;
    // The index is in sequence order, so the page needs no sort.
    EXPECT_EQ(plan->find("TEMP B-TREE"), std::string::npos) << column << ":\n" << *plan;
  }
}

TEST_F(SearchIndexTest, IndexedResultsMatchAFullScan) {
  std::unique_ptr<AuditStore> store = OpenStore(dir_.File("audit.db"), /*read_only=*/true);
  ASSERT_NE(store, nullptr);
  RecordQuery everything;
  std::vector<StoredRecord> all;
  ASSERT_TRUE(store
                  ->ScanRecords(everything,
                                [&](StoredRecord& row) {
                                  all.push_back(row);
                                  return Status::OK();
                                })
                  .ok());
  ASSERT_EQ(all.size(), 48u);
  const std::pair<const char*, std::string> cases[] = {
      {"actor", "key_1"}, {"action", "chat.completions"}, {"model", "kimi-k3"}, {"outcome", "ok"},
      {"request_id", "req-7"}, {"client_request_id", "client-3"}, {"actor", "nobody"}};
  for (const auto& [column, value] : cases) {
    const RecordQuery q = Filtered(column, value);
    std::vector<uint64_t> expected;
    for (const StoredRecord& row : all) {
      const AuditRecord& r = row.record;
      const std::string& field = std::string(column) == "actor"    ? r.actor
                                 : std::string(column) == "action" ? r.action
                                 : std::string(column) == "model"  ? r.model
                                 : std::string(column) == "outcome" ? r.outcome
                                 : std::string(column) == "request_id" ? r.request_id
                                                                       : r.client_request_id;
      if (r.seq >= q.from_seq && r.time_ms >= q.since_ms && r.time_ms < q.until_ms && field == value &&
          expected.size() < q.limit) {
        expected.push_back(r.seq);
      }
    }
    EXPECT_EQ(Seqs(*store, q), expected) << column << "=" << value;
  }
}

TEST_F(SearchIndexTest, ADatabaseWithoutTheIndexesGetsThemWhenOpenedForWriting) {
  {
    std::unique_ptr<AuditStore> store = OpenStore(dir_.File("audit.db"), /*read_only=*/false);
    ASSERT_NE(store, nullptr);
    for (const char* column : {"actor", "action", "model", "outcome", "request_id"}) {
      ASSERT_TRUE(store->ExecForTest(std::string("DROP INDEX audit_records_") + column).ok());
    }
  }
  {
    // Read-only: no migration, and the search still answers (by the time index).
    std::unique_ptr<AuditStore> old = OpenStore(dir_.File("audit.db"), /*read_only=*/true);
    ASSERT_NE(old, nullptr);
    Result<std::string> plan = old->ExplainScan(Filtered("actor", "key_1"));
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->find("audit_records_actor"), std::string::npos) << *plan;
    EXPECT_EQ(Seqs(*old, Filtered("actor", "key_1")).size(), 5u);
  }
  std::unique_ptr<AuditStore> migrated = OpenStore(dir_.File("audit.db"), /*read_only=*/false);
  ASSERT_NE(migrated, nullptr);
  Result<std::string> plan = migrated->ExplainScan(Filtered("actor", "key_1"));
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->find("USING INDEX audit_records_actor"), std::string::npos) << *plan;
}

// A database written before record format 3 has no client_request_id column: read-only it
// reads "" there (and a search by it finds nothing), opened for writing it gets the column
// and its index, and its rows keep their bytes.
TEST_F(SearchIndexTest, ADatabaseWithoutTheClientRequestIdColumnGetsIt) {
  std::string before;
  {
    std::unique_ptr<AuditStore> store = OpenStore(dir_.File("audit.db"), /*read_only=*/false);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->ExecForTest("DROP INDEX audit_records_client_request_id").ok());
    ASSERT_TRUE(store->ExecForTest("ALTER TABLE audit_records DROP COLUMN client_request_id").ok());
  }
  {
    std::unique_ptr<AuditStore> old = OpenStore(dir_.File("audit.db"), /*read_only=*/true);
    ASSERT_NE(old, nullptr);
    EXPECT_TRUE(Seqs(*old, Filtered("client_request_id", "client-3")).empty());
    Result<std::optional<StoredRecord>> row = old->ReadRecord(3);
    ASSERT_TRUE(row.ok() && row->has_value());
    EXPECT_TRUE((*row)->decode_error.ok()) << (*row)->decode_error.ToString();
    EXPECT_EQ((*row)->record.client_request_id, "");
    before = (*row)->record.actor;
  }
  std::unique_ptr<AuditStore> migrated = OpenStore(dir_.File("audit.db"), /*read_only=*/false);
  ASSERT_NE(migrated, nullptr);
  Result<std::string> plan = migrated->ExplainScan(Filtered("client_request_id", "client-3"));
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->find("USING INDEX audit_records_client_request_id"), std::string::npos) << *plan;
  Result<std::optional<StoredRecord>> row = migrated->ReadRecord(3);
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->record.actor, before);
}

// audit.db and its -wal and -shm files are the service account's alone.
TEST(AuditStoreFiles, TheDatabaseAndItsCompanionsAreOwnerOnly) {
  TempDir dir;
  BuildLog(dir.path(), 3, {});
  std::unique_ptr<AuditStore> store = OpenStore(dir.File("audit.db"), /*read_only=*/false);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->ExecForTest("CREATE TABLE scratch(x); DROP TABLE scratch").ok());  // the WAL is in use
  for (const char* name : {"audit.db", "audit.db-wal", "audit.db-shm"}) {
    std::error_code ec;
    const auto perms = std::filesystem::status(dir.File(name), ec).permissions();
    ASSERT_FALSE(ec) << name;
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
              std::filesystem::perms::none)
        << name;
  }
}

TEST(AuditStoreReads, HeadsAboveASizeComeSmallestFirst) {
  TempDir dir;
  BuildLog(dir.path(), 9, {3, 6, 6});  // and a final head at 9 when the sink closes
  std::unique_ptr<AuditStore> store = OpenStore(dir.File("audit.db"), /*read_only=*/true);
  ASSERT_NE(store, nullptr);
  std::vector<uint64_t> sizes;
  ASSERT_TRUE(store->ScanHeadsAbove(3, [&](const SignedTreeHead& h) {
                     sizes.push_back(h.tree_size);
                     return true;
                   }).ok());
  EXPECT_EQ(sizes, (std::vector<uint64_t>{6, 6, 9}));
  Result<uint64_t> largest = store->LargestHeadSize();
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(*largest, 9u);
}

TEST(AuditStoreReads, ALeafScanReportsAMissingRow) {
  TempDir dir;
  BuildLog(dir.path(), 10, {});
  std::unique_ptr<AuditStore> store = OpenStore(dir.File("audit.db"), /*read_only=*/false);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->ExecForTest("DELETE FROM audit_records WHERE seq = 4").ok());
  int seen = 0;
  Status s = store->ScanLeafHashes(2, 8, [&](const Hash&) { ++seen; });
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("record 4 is missing"), std::string::npos) << s.ToString();
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(store->ScanLeafHashes(8, 12, [](const Hash&) {}).code(), Status::Code::kCorruption);  // past the end
}

// A commit that crosses SQLite's automatic checkpoint threshold (1000 pages) must not copy
// the log into the database itself: the writer checkpoints after acknowledging its commit.
TEST(AuditStoreWal, CommitsLeavePagesInTheLogUntilTheWriterCheckpoints) {
  TempDir dir;
  const std::string path = dir.File("audit.db");
  std::unique_ptr<AuditStore> store = OpenStore(path, /*read_only=*/false);
  ASSERT_NE(store, nullptr);
  const auto database_bytes = [&] { return std::filesystem::file_size(path); };
  const uintmax_t before = database_bytes();
  ASSERT_TRUE(store
                  ->ExecForTest("CREATE TABLE filler(b BLOB);"
                                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) "
                                "INSERT INTO filler SELECT randomblob(3000) FROM n")
                  .ok());
  EXPECT_GE(store->WalPages(), 1200);
  EXPECT_EQ(database_bytes(), before) << "the commit copied the log into the database";
  ASSERT_TRUE(store->CheckpointWal().ok());
  EXPECT_EQ(store->WalPages(), 0);
  EXPECT_GT(database_bytes(), before + 1200u * 3000u);
}

}  // namespace
}  // namespace kimi::audit
