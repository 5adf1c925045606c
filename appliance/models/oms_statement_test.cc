#include "models/oms_statement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/oms_bundle.h"
#include "models/oms_encoding.h"
#include "models/oms_keys.h"
#include "models/oms_signature.h"
#include "models/oms_test_support.h"
#include "models/oms_verifier.h"

namespace kimi::models {
namespace {

using testing::MakeStatement;
using testing::Sha256Hex;
namespace fs = std::filesystem;

const std::string kDigestA = Sha256Hex("a");
const std::string kDigestB = Sha256Hex("b");

void ExpectRefused(const std::string& payload, const std::string& reason) {
  auto st = ParseStatement(payload);
  ASSERT_FALSE(st.ok()) << "accepted: " << payload;
  EXPECT_NE(st.status().message().find(reason), std::string::npos) << st.status().message();
}

TEST(StatementTest, ParsesAWellFormedFilesStatement) {
  auto st = ParseStatement(MakeStatement({{"a", kDigestA}, {"dir/b", kDigestB}}));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->method, SerializationMethod::kFiles);
  ASSERT_EQ(st->resources.size(), 2u);
  EXPECT_EQ(st->resources[1].path, "dir/b");
  EXPECT_EQ(HexEncode(st->subject_digest), Sha256Hex(*HexDecode(kDigestA) + *HexDecode(kDigestB)));
}

TEST(StatementTest, RefusesPathsThatEscapeTheModel) {
  ExpectRefused(MakeStatement({{"../etc/passwd", kDigestA}}), "escapes the model directory");
  ExpectRefused(MakeStatement({{"/etc/passwd", kDigestA}}), "escapes the model directory");
  ExpectRefused(MakeStatement({{"a/../../b", kDigestA}}), "escapes the model directory");
  ExpectRefused(MakeStatement({{"a//b", kDigestA}}), "not a canonical relative path");
  ExpectRefused(MakeStatement({{"a/./b", kDigestA}}), "not a canonical relative path");
  ExpectRefused(MakeStatement({{"", kDigestA}}), "is empty");
}

TEST(StatementTest, RefusesDuplicateAndUnsortedResources) {
  ExpectRefused(MakeStatement({{"a", kDigestA}, {"a", kDigestB}}), "duplicate resource \"a\"");
  ExpectRefused(MakeStatement({{"b", kDigestA}, {"a", kDigestB}}), "not sorted");
  // Components compare one by one: "a/z" sorts before "a-b" although '-' < '/'.
  EXPECT_TRUE(ParseStatement(MakeStatement({{"a/z", kDigestA}, {"a-b", kDigestB}})).ok());
  ExpectRefused(MakeStatement({{"a-b", kDigestA}, {"a/z", kDigestB}}), "not sorted");
}

TEST(StatementTest, RefusesMoreThanOneSubject) {
  auto j = nlohmann::json::parse(MakeStatement({{"a", kDigestA}}));
  j["subject"].push_back(j["subject"][0]);
  ExpectRefused(j.dump(), "exactly one subject, found 2");
}

TEST(StatementTest, RefusesASubjectDigestThatDoesNotCoverTheResources) {
  ExpectRefused(MakeStatement({{"a", kDigestA}}, kDigestB), "subject digest");
}

TEST(StatementTest, RefusesUnknownPredicateMethodAndHash) {
  auto j = nlohmann::json::parse(MakeStatement({{"a", kDigestA}}));
  j["predicateType"] = "https://example.com/other";
  ExpectRefused(j.dump(), "unknown predicateType");
  ExpectRefused(MakeStatement({{"a", kDigestA}}, "", "tarball"), "unknown serialization method");
  j = nlohmann::json::parse(MakeStatement({{"a", kDigestA}}));
  j["predicate"]["serialization"]["hash_type"] = "blake3";
  ExpectRefused(j.dump(), "not supported");
  j = nlohmann::json::parse(MakeStatement({{"a", kDigestA}}));
  j["_type"] = "https://in-toto.io/Statement/v0.1";
  ExpectRefused(j.dump(), "not an in-toto Statement v1");
}

TEST(StatementTest, ParsesShardNamesAndRefusesBadOnes) {
  // MakeStatement's shards use shard_size 4.
  auto st = ParseStatement(MakeStatement({{"w:0:4", kDigestA}, {"w:4:6", kDigestB}}, "", "shards"));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->resources[1].path, "w");
  EXPECT_EQ(st->resources[1].start, 4u);
  EXPECT_EQ(st->resources[1].end, 6u);
  ExpectRefused(MakeStatement({{"w:0", kDigestA}}, "", "shards"), "not path:start:end");
  ExpectRefused(MakeStatement({{"w:x:4", kDigestA}}, "", "shards"), "not a decimal offset");
  ExpectRefused(MakeStatement({{"w:00:4", kDigestA}}, "", "shards"), "not a decimal offset");
  ExpectRefused(MakeStatement({{"w:0:9", kDigestA}}, "", "shards"), "oversized");
  ExpectRefused(MakeStatement({{"w:0:4", kDigestA}, {"w:2:6", kDigestB}}, "", "shards"), "overlap");
  // Numeric order, not string order: 10 comes after 8.
  EXPECT_TRUE(ParseStatement(MakeStatement({{"w:8:12", kDigestA}, {"w:12:16", kDigestB}}, "", "shards")).ok());
  ExpectRefused(MakeStatement({{"../w:0:4", kDigestA}}, "", "shards"), "escapes the model directory");
}

TEST(PaeTest, MatchesTheDsseSpecification) {
  EXPECT_EQ(Pae("http://example.com/HelloWorld", "hello world"), "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(LegacyPae("t", "a\n'\"\\\x01"), "DSSEV1 1 t 6 b'a\\n\\'\"\\\\\\x01'");
  EXPECT_EQ(LegacyPae("t", "it's"), "DSSEV1 1 t 4 b\"it's\"");
}

TEST(BundleTest, RefusesUnknownMediaTypeAndWrongPayloadType) {
  auto key = GenerateP256Key();
  ASSERT_TRUE(key.ok());
  auto good = nlohmann::json::parse(testing::MakeKeyBundle(MakeStatement({{"a", kDigestA}}), key->get()));
  ASSERT_TRUE(ParseBundle(good.dump()).ok());

  auto bad = good;
  bad["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.4+json";
  auto r = ParseBundle(bad.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown mediaType"), std::string::npos);

  bad = good;
  bad["dsseEnvelope"]["payloadType"] = "application/json";
  r = ParseBundle(bad.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wrong payloadType"), std::string::npos);

  bad = good;
  bad["dsseEnvelope"]["signatures"].push_back(bad["dsseEnvelope"]["signatures"][0]);
  r = ParseBundle(bad.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exactly one signature"), std::string::npos);

  bad = good;
  bad["dsseEnvelope"]["payload"] = "not base64!";
  EXPECT_FALSE(ParseBundle(bad.dump()).ok());
  EXPECT_FALSE(ParseBundle("{\"mediaType\":").ok());
}

TEST(BundleTest, KeylessBundlesAreRefusedAsNeedingATrustRoot) {
  auto key = GenerateP256Key();
  ASSERT_TRUE(key.ok());
  auto bundle = nlohmann::json::parse(testing::MakeKeyBundle(MakeStatement({{"a", kDigestA}}), key->get()));
  bundle["verificationMaterial"] = {{"certificate", {{"rawBytes", "AAAA"}}},
                                    {"tlogEntries", nlohmann::json::array({{{"logIndex", "1"}}})}};
  auto parsed = ParseBundle(bundle.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kind, MaterialKind::kKeyless);
  TrustStore trust;
  ASSERT_TRUE(trust.AddPem(PublicKeyPem(key->get()), "k").ok());
  auto id = VerifyEnvelopeSignature(*parsed, trust);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(id.status().message().find("offline verification needs a configured Sigstore trust root"), std::string::npos);
}

// Validly signed bundles whose statements are malformed: the signature does not make them
// acceptable.
class CraftedBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = GenerateP256Key();
    ASSERT_TRUE(key.ok());
    key_ = *key;
    ASSERT_TRUE(trust_.AddPem(PublicKeyPem(key_.get()), "test key").ok());
    fs::create_directories(dir_ / "model");
    testing::WriteFile(dir_ / "model/a", "a");
    testing::WriteFile(dir_ / "model/b", "b");
  }
  Status VerifyWith(const std::string& statement) {
    testing::WriteFile(dir_ / "model.sig", testing::MakeKeyBundle(statement, key_.get()));
    VerifyRequest request;
    request.model_path = dir_ / "model";
    request.signature_path = dir_ / "model.sig";
    auto r = ModelVerifier::Verify(request, trust_);
    return r.ok() ? Status::OK() : r.status();
  }
  testing::TempDir dir_;
  SharedPkey key_;
  TrustStore trust_;
};

TEST_F(CraftedBundleTest, CorrectStatementVerifies) {
  EXPECT_TRUE(VerifyWith(MakeStatement({{"a", kDigestA}, {"b", kDigestB}})).ok());
}

TEST_F(CraftedBundleTest, PathEscapeIsRefused) {
  Status s = VerifyWith(MakeStatement({{"../model.sig", kDigestA}, {"a", kDigestA}}));
  EXPECT_NE(s.message().find("escapes the model directory"), std::string::npos) << s.ToString();
}

TEST_F(CraftedBundleTest, UnsortedResourcesAreRefused) {
  Status s = VerifyWith(MakeStatement({{"b", kDigestB}, {"a", kDigestA}}));
  EXPECT_NE(s.message().find("not sorted"), std::string::npos) << s.ToString();
}

TEST_F(CraftedBundleTest, DuplicateResourcesAreRefused) {
  Status s = VerifyWith(MakeStatement({{"a", kDigestA}, {"a", kDigestA}, {"b", kDigestB}}));
  EXPECT_NE(s.message().find("duplicate resource"), std::string::npos) << s.ToString();
}

TEST_F(CraftedBundleTest, SymlinksAreRefusedUnlessAllowed) {
  fs::create_symlink("a", dir_ / "model/link");
  std::vector<std::pair<std::string, std::string>> resources = {{"a", kDigestA}, {"b", kDigestB}, {"link", kDigestA}};
  Status s = VerifyWith(MakeStatement(resources));
  EXPECT_NE(s.message().find("symbolic link \"link\""), std::string::npos) << s.ToString();
  EXPECT_TRUE(VerifyWith(MakeStatement(resources, "", "files", /*allow_symlinks=*/true)).ok());
}

TEST_F(CraftedBundleTest, SymlinkOutOfTheModelIsRefusedEvenWhenAllowed) {
  testing::WriteFile(dir_ / "outside", "a");
  fs::create_symlink(dir_ / "outside", dir_ / "model/link");
  Status s = VerifyWith(MakeStatement({{"a", kDigestA}, {"b", kDigestB}, {"link", kDigestA}}, "", "files", true));
  EXPECT_NE(s.message().find("points outside the model directory"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace kimi::models
