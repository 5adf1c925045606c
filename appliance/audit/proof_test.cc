// Proofs built from a real log, checked in-process and by the standalone kimi-audit-verify.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "audit/audit_key.h"
#include "audit/audit_store.h"
#include "audit/log_proofs.h"
#include "audit/merkle.h"
#include "audit/proof_format.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::TempDir;

class ProofTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = BuildLog(dir_.path(), 37, {13, 16});
    AuditStoreOptions o;
    o.read_only = true;
    Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(dir_.File("audit.db"), o);
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
  }

  TempDir dir_;
  PublicKey key_{};
  std::unique_ptr<AuditStore> store_;
};

TEST_F(ProofTest, EveryRecordHasAVerifyingInclusionProof) {
  for (uint64_t seq = 0; seq < 37; ++seq) {
    Result<InclusionProof> proof = BuildInclusionProof(*store_, seq, std::nullopt);
    ASSERT_TRUE(proof.ok()) << proof.status().ToString();
    EXPECT_EQ(proof->tree_size, 37u);
    Result<InclusionProof> parsed = InclusionProofFromJson(InclusionProofToJson(*proof));
    ASSERT_TRUE(parsed.ok());
    Result<ProofCheck> check = CheckInclusionProof(*parsed, key_, std::nullopt);
    EXPECT_TRUE(check.ok()) << seq << ": " << check.status().ToString();
  }
  // Against an older head, too.
  Result<InclusionProof> old = BuildInclusionProof(*store_, 12, 13);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(CheckInclusionProof(*old, key_, old->signed_head).ok());
  EXPECT_EQ(BuildInclusionProof(*store_, 13, 13).status().code(), Status::Code::kFailedPrecondition);
}

TEST_F(ProofTest, AlteredInclusionProofsFail) {
  Result<InclusionProof> good = BuildInclusionProof(*store_, 21, std::nullopt);
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE(CheckInclusionProof(*good, key_, std::nullopt).ok());
  auto fails = [&](InclusionProof p, const std::optional<SignedTreeHead>& trusted = std::nullopt) {
    return CheckInclusionProof(p, key_, trusted).status().code() == Status::Code::kCorruption;
  };
  InclusionProof p = *good;
  p.record.replace(p.record.find("\"outcome\":\"ok\""), 14, "\"outcome\":\"no\"");
  EXPECT_TRUE(fails(p));
  p = *good;
  p.record.replace(p.record.find("\"outcome\":\"ok\""), 14, "\"outcome\":\"no\"");
  p.leaf_hash = HashLeaf(p.record);  // consistent leaf, but not in the tree
  EXPECT_TRUE(fails(p));
  p = *good;
  p.audit_path[1][0] ^= 1;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.audit_path.pop_back();
  EXPECT_TRUE(fails(p));
  p = *good;
  p.leaf_index = 20;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.signed_head.root_hash[5] ^= 1;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.signed_head.signature[0] ^= 1;
  EXPECT_TRUE(fails(p));
  // A trusted head of another size does not accept this proof.
  Result<InclusionProof> other = BuildInclusionProof(*store_, 3, 16);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(fails(*good, other->signed_head));
}

TEST_F(ProofTest, ConsistencyProofsVerifyAndAlteredOnesFail) {
  for (uint64_t old_size : {0, 1, 5, 13, 16, 36, 37}) {
    Result<ConsistencyProof> proof = BuildConsistencyProof(*store_, old_size, std::nullopt);
    ASSERT_TRUE(proof.ok()) << proof.status().ToString();
    EXPECT_EQ(proof->old_head.has_value(), old_size == 13 || old_size == 16 || old_size == 37) << old_size;
    Result<ConsistencyProof> parsed = ConsistencyProofFromJson(ConsistencyProofToJson(*proof));
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(CheckConsistencyProof(*parsed, key_, std::nullopt, std::nullopt).ok()) << old_size;
  }
  Result<ConsistencyProof> good = BuildConsistencyProof(*store_, 13, std::nullopt);
  ASSERT_TRUE(good.ok());
  auto fails = [&](const ConsistencyProof& p) {
    return CheckConsistencyProof(p, key_, std::nullopt, std::nullopt).status().code() == Status::Code::kCorruption;
  };
  ConsistencyProof p = *good;
  p.proof[0][3] ^= 1;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.old_root[0] ^= 1;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.old_head.reset();  // unsigned old root: still must be right
  p.old_root[0] ^= 1;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.new_head.tree_size = 36;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.old_size = 12;
  EXPECT_TRUE(fails(p));
  p = *good;
  p.proof.pop_back();
  EXPECT_TRUE(fails(p));
}

void WriteJson(const std::string& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2); }

TEST_F(ProofTest, StandaloneVerifierAcceptsGoodAndRejectsAlteredProofs) {
  if (std::getenv("KIMI_BUILD_DIR") == nullptr) GTEST_SKIP() << "KIMI_BUILD_DIR is not set (run through ctest)";
  TempDir out;
  const std::string key = out.File("key.json");
  WriteJson(key, PublicKeyToJson(key_));

  Result<InclusionProof> inc = BuildInclusionProof(*store_, 30, std::nullopt);
  ASSERT_TRUE(inc.ok());
  WriteJson(out.File("inc.json"), InclusionProofToJson(*inc));
  WriteJson(out.File("head.json"), TreeHeadToJson(inc->signed_head));
  EXPECT_EQ(testing::RunStandaloneVerifier("inclusion --public-key " + key + " --proof " + out.File("inc.json")), 0);
  EXPECT_EQ(testing::RunStandaloneVerifier("inclusion --public-key " + key + " --proof " + out.File("inc.json") + " --head " +
                          out.File("head.json")),
            0);
  EXPECT_EQ(testing::RunStandaloneVerifier("head --public-key " + key + " --head " + out.File("head.json")), 0);
  InclusionProof bad = *inc;
  bad.audit_path[2][31] ^= 0x80;
  WriteJson(out.File("inc-bad.json"), InclusionProofToJson(bad));
  EXPECT_EQ(testing::RunStandaloneVerifier("inclusion --public-key " + key + " --proof " + out.File("inc-bad.json")), 1);

  Result<ConsistencyProof> con = BuildConsistencyProof(*store_, 16, std::nullopt);
  ASSERT_TRUE(con.ok());
  WriteJson(out.File("con.json"), ConsistencyProofToJson(*con));
  WriteJson(out.File("old.json"), TreeHeadToJson(*con->old_head));
  EXPECT_EQ(testing::RunStandaloneVerifier("consistency --public-key " + key + " --proof " + out.File("con.json") + " --old-head " +
                          out.File("old.json") + " --new-head " + out.File("head.json")),
            0);
  ConsistencyProof bad_con = *con;
  bad_con.proof.back()[0] ^= 1;
  WriteJson(out.File("con-bad.json"), ConsistencyProofToJson(bad_con));
  EXPECT_EQ(testing::RunStandaloneVerifier("consistency --public-key " + key + " --proof " + out.File("con-bad.json")), 1);

  // A head re-signed by another key is rejected.
  std::array<uint8_t, 32> seed{};
  seed.fill(7);
  const AuditKey other = AuditKey::FromSeed(seed);
  WriteJson(out.File("other.json"), PublicKeyToJson(other.public_key()));
  EXPECT_EQ(testing::RunStandaloneVerifier("head --public-key " + out.File("other.json") + " --head " + out.File("head.json")), 1);
}

}  // namespace
}  // namespace kimi::audit
