#include "models/oms_signer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/oms_encoding.h"
#include "models/oms_keys.h"
#include "models/oms_test_support.h"
#include "models/oms_verifier.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Same keys at every level, same value types, arrays compared element-wise by the shape of
// their first element; the payload is decoded and compared the same way.
void ExpectSameShape(const Json& ours, const Json& ref, const std::string& where) {
  ASSERT_EQ(ours.type_name(), std::string(ref.type_name())) << where;
  if (ref.is_object()) {
    std::vector<std::string> ours_keys, ref_keys;
    for (auto it = ours.begin(); it != ours.end(); ++it) ours_keys.push_back(it.key());
    for (auto it = ref.begin(); it != ref.end(); ++it) ref_keys.push_back(it.key());
    std::sort(ours_keys.begin(), ours_keys.end());
    std::sort(ref_keys.begin(), ref_keys.end());
    ASSERT_EQ(ours_keys, ref_keys) << where;
    for (const auto& k : ref_keys) {
      if (k == "payload") {
        ExpectSameShape(Json::parse(*Base64Decode(ours[k].get<std::string>())),
                        Json::parse(*Base64Decode(ref[k].get<std::string>())), where + ".payload(decoded)");
      } else {
        ExpectSameShape(ours[k], ref[k], where + "." + k);
      }
    }
  } else if (ref.is_array()) {
    ASSERT_EQ(ours.empty(), ref.empty()) << where;
    if (!ref.empty()) ExpectSameShape(ours[0], ref[0], where + "[0]");
  }
}

class SignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = GenerateP256Key();
    ASSERT_TRUE(key.ok());
    key_ = *key;
    ASSERT_TRUE(trust_.AddPem(PublicKeyPem(key_.get()), "test key").ok());
    model_ = dir_ / "my-model";
    fs::create_directories(model_ + "/sub");
    testing::WriteFile(model_ + "/config.json", "{\"layers\": 2}");
    testing::WriteFile(model_ + "/sub/weights.bin", std::string(10000, 'w'));
    testing::WriteFile(model_ + "/empty", "");
    fs::create_directories(model_ + "/.git");
    testing::WriteFile(model_ + "/.git/HEAD", "ref: x");
  }
  Result<VerifiedManifest> Verify() {
    VerifyRequest request;
    request.model_path = model_;
    return ModelVerifier::Verify(request, trust_);
  }
  testing::TempDir dir_;
  std::string model_;
  SharedPkey key_;
  TrustStore trust_;
};

TEST_F(SignerTest, SignedModelVerifiesAndNamesItsKey) {
  SignRequest request;
  request.model_path = model_;
  request.private_key = key_;
  auto signed_model = SignModel(request);
  ASSERT_TRUE(signed_model.ok()) << signed_model.status().ToString();
  EXPECT_EQ(signed_model->signature_path, model_ + "/model.sig");
  EXPECT_EQ(signed_model->resources, 3u);  // config.json, empty, sub/weights.bin; .git ignored
  auto manifest = Verify();
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->subject_digest_hex(), signed_model->subject_digest_hex);
  EXPECT_EQ(manifest->signer().fingerprint, KeyFingerprint(key_.get()));
  EXPECT_EQ(manifest->model_name(), "my-model");
  EXPECT_EQ(manifest->files(), (std::vector<std::string>{"config.json", "empty", "sub/weights.bin"}));

  testing::FlipByte(model_ + "/sub/weights.bin", 9999);
  auto tampered = Verify();
  ASSERT_FALSE(tampered.ok());
  EXPECT_NE(tampered.status().message().find("\"sub/weights.bin\""), std::string::npos);
}

TEST_F(SignerTest, BundleHasTheStructureOfTheReferenceVector) {
  SignRequest request;
  request.model_path = model_;
  request.private_key = key_;
  ASSERT_TRUE(SignModel(request).ok());
  Json ours = Json::parse(testing::ReadFile(model_ + "/model.sig"));
  Json ref = Json::parse(testing::ReadFile(testing::VectorsDir() + "/v1.1.0-elliptic-key/model.sig"));
  ExpectSameShape(ours, ref, "bundle");
  EXPECT_EQ(ours["mediaType"], ref["mediaType"]);
  EXPECT_EQ(ours["dsseEnvelope"]["payloadType"], ref["dsseEnvelope"]["payloadType"]);
  Json payload = Json::parse(*Base64Decode(ours["dsseEnvelope"]["payload"].get<std::string>()));
  Json ref_payload = Json::parse(*Base64Decode(ref["dsseEnvelope"]["payload"].get<std::string>()));
  EXPECT_EQ(payload["predicateType"], ref_payload["predicateType"]);
  EXPECT_EQ(payload["_type"], ref_payload["_type"]);
  auto ignore = payload["predicate"]["serialization"]["ignore_paths"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(ignore.begin(), ignore.end(), "model.sig"), ignore.end());
}

TEST_F(SignerTest, ReferenceKeyOverReferenceFilesGivesTheReferenceManifest) {
  // Signing the 1.1.0 vector's files with its key must reproduce its hint, resources and
  // subject digest (the signature itself is randomised).
  testing::Vector v = testing::AllVectors()[8];
  ASSERT_EQ(v.name, "v1.1.0-elliptic-key");
  std::string model = testing::CopyVector(v, dir_.path());
  auto key = LoadPrivateKeyPem(testing::ReadFile(testing::VectorsDir() + "/keys/signing-key.pem"));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  Json ref = Json::parse(testing::ReadFile(model + "/model.sig"));
  SignRequest request;
  request.model_path = model;
  request.signature_path = dir_ / "ours.sig";
  request.private_key = *key;
  request.ignore_paths.push_back("ignore-me");
  ASSERT_TRUE(SignModel(request).ok());
  Json ours = Json::parse(testing::ReadFile(dir_ / "ours.sig"));
  EXPECT_EQ(ours["verificationMaterial"]["publicKey"]["hint"], ref["verificationMaterial"]["publicKey"]["hint"]);
  Json payload = Json::parse(*Base64Decode(ours["dsseEnvelope"]["payload"].get<std::string>()));
  Json ref_payload = Json::parse(*Base64Decode(ref["dsseEnvelope"]["payload"].get<std::string>()));
  EXPECT_EQ(payload["subject"], ref_payload["subject"]);
  EXPECT_EQ(payload["predicate"]["resources"], ref_payload["predicate"]["resources"]);

  VerifyRequest verify;
  verify.model_path = model;
  verify.signature_path = dir_ / "ours.sig";
  auto manifest = ModelVerifier::Verify(verify, testing::TrustFor(v));
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
}

TEST_F(SignerTest, ShardedSignatureVerifiesAndNamesTheChangedRange) {
  SignRequest request;
  request.model_path = model_;
  request.private_key = key_;
  request.shard_size = 4096;
  auto signed_model = SignModel(request);
  ASSERT_TRUE(signed_model.ok()) << signed_model.status().ToString();
  EXPECT_EQ(signed_model->resources, 1u + 3u);  // config.json, weights in 3 shards; empty file has none
  auto manifest = Verify();
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->method(), SerializationMethod::kShards);
  EXPECT_EQ(manifest->entries().back().name, "sub/weights.bin:8192:10000");

  testing::FlipByte(model_ + "/sub/weights.bin", 5000);
  auto tampered = Verify();
  ASSERT_FALSE(tampered.ok());
  EXPECT_NE(tampered.status().message().find("sub/weights.bin (bytes 4096-8192)"), std::string::npos)
      << tampered.status().message();

  testing::WriteFile(model_ + "/sub/weights.bin", std::string(10001, 'w'));
  auto grown = Verify();
  ASSERT_FALSE(grown.ok());
  EXPECT_NE(grown.status().message().find("size changed"), std::string::npos) << grown.status().message();
}

TEST(AutoShardSizeTest, AboutAThousandShardsBetween4MiBAnd1GiB) {
  EXPECT_EQ(AutoShardSize(0), 4ull << 20);
  EXPECT_EQ(AutoShardSize(292ull << 20), 4ull << 20);          // k3-mini
  EXPECT_EQ(AutoShardSize((4ull << 30) + 1), 8ull << 20);      // just over 1024 shards of 4 MiB
  EXPECT_EQ(AutoShardSize(64ull << 30), 64ull << 20);
  EXPECT_EQ(AutoShardSize(1400ull << 30), 1ull << 30);         // the K3 checkpoint: capped
}

TEST_F(SignerTest, AutoShardSizeSignsShardsThatVerify) {
  SignRequest request;
  request.model_path = model_;
  request.private_key = key_;
  request.auto_shard_size = true;
  auto signed_model = SignModel(request);
  ASSERT_TRUE(signed_model.ok()) << signed_model.status().ToString();
  auto manifest = Verify();
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->method(), SerializationMethod::kShards);
  EXPECT_EQ(manifest->shard_size(), 4ull << 20);
}

TEST_F(SignerTest, SymlinksAreRefusedAtSigning) {
  fs::create_symlink("config.json", model_ + "/link");
  SignRequest request;
  request.model_path = model_;
  request.private_key = key_;
  auto r = SignModel(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("symbolic link \"link\""), std::string::npos);
}

}  // namespace
}  // namespace kimi::models
