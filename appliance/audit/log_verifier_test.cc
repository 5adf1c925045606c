#include "audit/log_verifier.h"

#include <gtest/gtest.h>

#include "audit/merkle.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::TamperSql;
using testing::TempDir;

// 20 records with signed heads at sizes 5, 10 and 20 (the last from Close()).
class TamperTest : public ::testing::Test {
 protected:
  void SetUp() override { key_ = BuildLog(dir_.path(), 20, {5, 10}); }

  std::string Db() const { return dir_.File("audit.db"); }

  VerifyReport Verify() {
    AuditStoreOptions o;
    o.read_only = true;
    Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(Db(), o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return {};
    Result<VerifyReport> report = VerifyAuditLog(**store, key_);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : VerifyReport{};
  }

  void ExpectFirstBad(uint64_t seq) {
    const VerifyReport r = Verify();
    EXPECT_FALSE(r.ok());
    ASSERT_TRUE(r.first_bad_seq.has_value());
    EXPECT_EQ(*r.first_bad_seq, seq);
    for (const std::string& p : r.problems) SCOPED_TRACE(p);
  }

  TempDir dir_;
  PublicKey key_{};
};

TEST_F(TamperTest, IntactLogVerifies) {
  const VerifyReport r = Verify();
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems.front());
  EXPECT_EQ(r.records, 20u);
  EXPECT_EQ(r.heads, 3u);
  EXPECT_EQ(r.covered_size, 20u);
}

TEST_F(TamperTest, EditedTextField) {
  TamperSql(Db(), "UPDATE audit_records SET actor = 'mallory' WHERE seq = 7");
  ExpectFirstBad(7);
}

TEST_F(TamperTest, OneByteEditedInARow) {
  // Flip one character of the request hash in place, keeping the length.
  TamperSql(Db(),
            "UPDATE audit_records SET request_sha256 = "
            "(CASE substr(request_sha256, 1, 1) WHEN 'a' THEN 'b' ELSE 'a' END) || substr(request_sha256, 2) "
            "WHERE seq = 13");
  ExpectFirstBad(13);
}

TEST_F(TamperTest, EditedIntegerField) {
  TamperSql(Db(), "UPDATE audit_records SET http_status = 403 WHERE seq = 12");
  ExpectFirstBad(12);
}

TEST_F(TamperTest, EditedBackendField) {
  TamperSql(Db(), "UPDATE audit_records SET backend = 'upstream:elsewhere' WHERE seq = 9");
  ExpectFirstBad(9);
}

TEST_F(TamperTest, RecordVersionDowngraded) {
  // Version 1 bytes omit the backend fields; claiming version 1 must not hide an edit there.
  TamperSql(Db(), "UPDATE audit_records SET v = 1, backend = 'hidden' WHERE seq = 6");
  ExpectFirstBad(6);
}

TEST_F(TamperTest, EditedClientRequestId) {
  TamperSql(Db(), "UPDATE audit_records SET client_request_id = 'someone-else' WHERE seq = 9");
  ExpectFirstBad(9);
}

TEST_F(TamperTest, ClientRequestIdHiddenByADowngradeToVersion2) {
  // Version 2 bytes omit client_request_id; claiming version 2 must not hide an edit there.
  TamperSql(Db(), "UPDATE audit_records SET v = 2, client_request_id = 'hidden' WHERE seq = 4");
  ExpectFirstBad(4);
}

TEST_F(TamperTest, UnknownRecordVersion) {
  TamperSql(Db(), "UPDATE audit_records SET v = 7 WHERE seq = 3");
  ExpectFirstBad(3);
}

TEST_F(TamperTest, IntegerColumnHoldingText) {
  TamperSql(Db(), "UPDATE audit_records SET prompt_tokens = 'fourteen' WHERE seq = 4");
  ExpectFirstBad(4);
}

TEST_F(TamperTest, EditedStoredLeafHash) {
  TamperSql(Db(), "UPDATE audit_records SET leaf_hash = randomblob(32) WHERE seq = 3");
  ExpectFirstBad(3);
}

TEST_F(TamperTest, EditedContent) {
  TamperSql(Db(), "UPDATE audit_content SET prompt = 'something harmless' WHERE seq = 9");
  ExpectFirstBad(9);
}

TEST_F(TamperTest, DeletedRow) {
  TamperSql(Db(), "DELETE FROM audit_records WHERE seq = 9");
  ExpectFirstBad(9);
}

TEST_F(TamperTest, DeletedLastRow) {
  TamperSql(Db(), "DELETE FROM audit_records WHERE seq = 19");
  ExpectFirstBad(19);
}

TEST_F(TamperTest, SwappedPair) {
  TamperSql(Db(),
            "UPDATE audit_records SET seq = -1 WHERE seq = 5; "
            "UPDATE audit_records SET seq = 5 WHERE seq = 6; "
            "UPDATE audit_records SET seq = 6 WHERE seq = -1;");
  ExpectFirstBad(5);
}

TEST_F(TamperTest, InsertedRowWithRenumbering) {
  TamperSql(Db(),
            "UPDATE audit_records SET seq = seq + 1000 WHERE seq >= 8; "
            "UPDATE audit_records SET seq = seq - 999 WHERE seq >= 1000; "
            "INSERT INTO audit_records SELECT 8, time_ms, actor, role, source, 'req-forged', action, target, model, "
            "model_digest, outcome, http_status, prompt_tokens, completion_tokens, ttft_us, total_us, policy, "
            "request_sha256, response_sha256, detail, content_sha256, leaf_hash, v, backend, route_decision, attempts, "
            "client_request_id, start_seq FROM audit_records WHERE seq = 7;");
  ExpectFirstBad(8);
}

TEST_F(TamperTest, AppendedRow) {
  TamperSql(Db(),
            "INSERT INTO audit_records SELECT 20, time_ms, actor, role, source, 'req-late', action, target, model, "
            "model_digest, outcome, http_status, prompt_tokens, completion_tokens, ttft_us, total_us, policy, "
            "request_sha256, response_sha256, detail, content_sha256, leaf_hash, v, backend, route_decision, attempts, "
            "client_request_id, start_seq FROM audit_records WHERE seq = 19;");
  ExpectFirstBad(20);
}

TEST_F(TamperTest, ForgedHeadRoot) {
  TamperSql(Db(), "UPDATE audit_heads SET root_hash = randomblob(32) WHERE tree_size = 10");
  ExpectFirstBad(5);  // the first record the forged head claims to vouch for
}

TEST_F(TamperTest, ForgedHeadSignature) {
  TamperSql(Db(), "UPDATE audit_heads SET signature = randomblob(64) WHERE tree_size = 20");
  ExpectFirstBad(10);
}

TEST_F(TamperTest, ForgedHeadSize) {
  TamperSql(Db(), "UPDATE audit_heads SET tree_size = 8 WHERE tree_size = 10");
  ExpectFirstBad(5);
}

TEST_F(TamperTest, RowRewrittenWithItsLeafHashIsLocatedBetweenHeads) {
  // Someone who also recomputes the stored leaf hash still cannot forge the signed head: the
  // damage is located to the records after the last head that still matches.
  AuditRecord forged = testing::SampleRecord(12);
  forged.seq = 12;
  forged.actor = "mallory";
  NormalizeRecord(&forged);
  const Hash leaf = HashLeaf(CanonicalRecordBytes(forged));
  TamperSql(Db(), "UPDATE audit_records SET actor = 'mallory', leaf_hash = x'" + ToHex(leaf) + "' WHERE seq = 12");
  ExpectFirstBad(10);
}

TEST_F(TamperTest, ReportsTheFirstOfSeveralProblems) {
  TamperSql(Db(), "UPDATE audit_records SET outcome = 'denied' WHERE seq = 15");
  TamperSql(Db(), "DELETE FROM audit_records WHERE seq = 17");
  TamperSql(Db(), "UPDATE audit_records SET model = 'other' WHERE seq = 11");
  ExpectFirstBad(11);
}

}  // namespace
}  // namespace kimi::audit
