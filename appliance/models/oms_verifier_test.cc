#include "models/oms_verifier.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "models/oms_encoding.h"
#include "models/oms_keys.h"
#include "models/oms_test_support.h"

namespace kimi::models {
namespace {

using testing::AllVectors;
using testing::TempDir;
using testing::Vector;
namespace fs = std::filesystem;

Result<VerifiedManifest> VerifyVector(const Vector& v, const std::string& model, const TrustStore& trust,
                                      const KnownDigests* known = nullptr) {
  VerifyRequest request;
  request.known_digests = known;
  request.model_path = model;
  request.signature_path = fs::path(model).parent_path().string() + "/model.sig";
  if (!v.single_file) request.signature_path = model + "/model.sig";
  request.extra_ignore_paths = v.extra_ignore;
  request.hashing.threads = 2;
  return ModelVerifier::Verify(request, trust);
}

std::string SigPath(const Vector& v, const std::string& model) {
  return v.single_file ? fs::path(model).parent_path().string() + "/model.sig" : model + "/model.sig";
}

// Rewrites one base64 field of the bundle after flipping a byte of its decoded value.
void FlipInBundle(const std::string& sig_path, const char* field, size_t offset) {
  auto bundle = nlohmann::ordered_json::parse(testing::ReadFile(sig_path));
  auto& env = bundle["dsseEnvelope"];
  nlohmann::ordered_json& target = std::string(field) == "sig" ? env["signatures"][0]["sig"] : env["payload"];
  std::string bytes = *Base64Decode(target.get<std::string>());
  bytes.at(offset) ^= 0x01;
  target = Base64Encode(bytes);
  testing::WriteFile(sig_path, bundle.dump());
}

std::string ExpectedSubject(const Vector& v) {
  if (v.name == "v0.2.0-certificate" || v.certificate) return "61d4849d9d90076d6215f4d525f13d6574af8e3f67aef3e6f36fc40a14fdd226";
  if (v.single_file) return "afa48c8674afe334b8a7dea34f7b46ab256e9255edf8da2132792341b667a45b";
  return "92745110b1ab4368471cbe31664e10174e954b113a3df333db860317b2c6dec4";
}

// Only ModelVerifier makes a VerifiedManifest; nothing else can build or fake one.
static_assert(!std::is_default_constructible_v<VerifiedManifest>);

class VectorTest : public ::testing::TestWithParam<Vector> {};

TEST_P(VectorTest, VerifiesWithItsKeyOrCaChain) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->subject_digest_hex(), ExpectedSubject(v));
  EXPECT_EQ(manifest->signer().kind, v.certificate ? SignerIdentity::Kind::kCertificate : SignerIdentity::Kind::kKey);
  if (v.certificate) {
    EXPECT_NE(manifest->signer().description.find("CN=intermediate-ca"), std::string::npos);
    // The chain's anchor is the trusted root (keys/ca-cert.pem), through the intermediate.
    EXPECT_NE(manifest->signer().description.find(
                  "; trust anchor sha256:96b4074fc3c05ab9a7dcdbc239ce4737ecfc5e6ca298f7a908cbe615646a6bc5)"),
              std::string::npos)
        << manifest->signer().description;
  } else {
    EXPECT_EQ(manifest->signer().fingerprint, "e8450dec4eb99dae995da9af1bc2cc9f76ed669ee2e744f57abba763df3e3f8e");
  }
  if (v.single_file) {
    EXPECT_EQ(manifest->files(), std::vector<std::string>{"."});
  } else {
    EXPECT_EQ(manifest->files(), (std::vector<std::string>{"signme-1", "signme-2"}));
  }
}

TEST_P(VectorTest, FlippedModelByteIsRefusedNamingTheFile) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  std::string file = v.single_file ? model : model + "/signme-2";
  testing::FlipByte(file, 3);
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kCorruption);
  EXPECT_NE(manifest.status().message().find("digest mismatch"), std::string::npos) << manifest.status().message();
  EXPECT_NE(manifest.status().message().find(v.single_file ? "signme-1" : "\"signme-2\""), std::string::npos)
      << manifest.status().message();
}

TEST_P(VectorTest, FlippedSignatureByteIsRefused) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  FlipInBundle(SigPath(v, model), "sig", 40);
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kPermissionDenied);
  EXPECT_NE(manifest.status().message().find("invalid signature"), std::string::npos) << manifest.status().message();
}

TEST_P(VectorTest, FlippedPayloadByteIsRefused) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  // Offset 120 falls inside the first subject; any byte would do.
  FlipInBundle(SigPath(v, model), "payload", 120);
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kPermissionDenied);
  EXPECT_NE(manifest.status().message().find("invalid signature"), std::string::npos) << manifest.status().message();
}

TEST_P(VectorTest, RemovedFileIsRefusedNamingIt) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  std::string file = v.single_file ? model : model + "/signme-1";
  fs::remove(file);
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("signme-1"), std::string::npos) << manifest.status().message();
  if (!v.single_file) {
    EXPECT_NE(manifest.status().message().find("missing file"), std::string::npos);
  }
}

TEST_P(VectorTest, AddedFileIsRefusedNamingIt) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  if (v.single_file) {
    // A single-file signature never covers a directory, whatever it holds.
    VerifyRequest request;
    request.model_path = fs::path(model).parent_path().string();
    auto manifest = ModelVerifier::Verify(request, testing::TrustFor(v));
    ASSERT_FALSE(manifest.ok());
    EXPECT_NE(manifest.status().message().find("single file"), std::string::npos) << manifest.status().message();
    return;
  }
  fs::create_directories(model + "/extra");
  testing::WriteFile(model + "/extra/weights.bin", "not signed");
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kCorruption);
  EXPECT_NE(manifest.status().message().find("extra file \"extra/weights.bin\""), std::string::npos)
      << manifest.status().message();
}

TEST_P(VectorTest, AnotherKeyOrCaIsRefused) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  TrustStore other;
  if (v.certificate) {
    // The intermediate alone is not a root: the chain must end at a trusted root.
    ASSERT_TRUE(other.AddPemFile(testing::VectorsDir() + "/keys/int-ca-cert.pem").ok());
  } else {
    auto key = GenerateP256Key();
    ASSERT_TRUE(key.ok());
    ASSERT_TRUE(other.AddPem(PublicKeyPem(key->get()), "generated").ok());
  }
  auto manifest = VerifyVector(v, model, other);
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kPermissionDenied);
  const std::string& msg = manifest.status().message();
  if (v.certificate) {
    EXPECT_NE(msg.find("untrusted certificate chain"), std::string::npos) << msg;
  } else if (v.name.rfind("v1.1.0", 0) == 0 || v.name.rfind("v0.3.1", 0) == 0 || v.name.rfind("v1.0", 0) == 0) {
    EXPECT_NE(msg.find("key mismatch"), std::string::npos) << msg;
  }
}

TEST_P(VectorTest, WrongKindOfTrustIsRefused) {
  const Vector& v = GetParam();
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  Vector swapped = v;
  swapped.certificate = !v.certificate;
  auto manifest = VerifyVector(v, model, testing::TrustFor(swapped));
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(manifest.status().message().find("trust store has no"), std::string::npos) << manifest.status().message();
}

INSTANTIATE_TEST_SUITE_P(AllReferenceVectors, VectorTest, ::testing::ValuesIn(AllVectors()),
                         [](const ::testing::TestParamInfo<Vector>& info) {
                           std::string name = info.param.name;
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(VerifierTest, IgnoreMeMustBeIgnoredWhenTheBundleDoesNotSaySo) {
  Vector v = AllVectors()[5];  // v1.0.1-certificate: no ignore_paths in the bundle
  ASSERT_EQ(v.name, "v1.0.1-certificate");
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  v.extra_ignore.clear();
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("extra file \"ignore-me\""), std::string::npos) << manifest.status().message();
}

TEST(VerifierTest, SignedIgnorePathsAreHonoured) {
  Vector v = AllVectors()[8];  // v1.1.0-elliptic-key lists ignore-me and .git
  ASSERT_EQ(v.name, "v1.1.0-elliptic-key");
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  testing::WriteFile(model + "/ignore-me", "changed, and ignored");
  fs::create_directories(model + "/.git/objects");
  testing::WriteFile(model + "/.git/objects/x", "ignored too");
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
}

TEST(VerifierTest, TrustDirectoryWithBothKindsVerifiesEveryVector) {
  TempDir trust_dir;
  fs::copy(testing::VectorsDir() + "/keys/ca-cert.pem", trust_dir / "ca.pem");
  fs::copy(testing::VectorsDir() + "/keys/signing-key-pub.pem", trust_dir / "signer.pem");
  auto trust = TrustStore::LoadDirectory(trust_dir.path());
  ASSERT_TRUE(trust.ok());
  EXPECT_EQ(trust->keys().size(), 1u);
  EXPECT_EQ(trust->cas().size(), 1u);
  for (const Vector& v : AllVectors()) {
    TempDir tmp;
    std::string model = testing::CopyVector(v, tmp.path());
    auto manifest = VerifyVector(v, model, *trust);
    EXPECT_TRUE(manifest.ok()) << v.name << ": " << manifest.status().ToString();
  }
}

// A trust store named by a FIFO waited in open(2) for a writer, the daemon's start with it; a
// link to a device (/dev/zero) was read without end. Each is refused, naming it, and the
// directory's other files still load.
TEST(VerifierTest, ATrustFileThatIsAFifoOrADeviceIsRefusedNotWaitedOnOrReadForever) {
  TempDir trust_dir;
  fs::copy(testing::VectorsDir() + "/keys/signing-key-pub.pem", trust_dir / "signer.pem");
  const std::string fifo = trust_dir / "fifo.pem";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = TrustStore::LoadPath(fifo);
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_NE(from_fifo.status().message().find("FIFO"), std::string::npos) << from_fifo.status().ToString();
  const fs::path device = trust_dir / "zero.pem";
  fs::create_symlink("/dev/zero", device);
  auto from_device = TrustStore::LoadPath(device.string());
  ASSERT_FALSE(from_device.ok());
  EXPECT_NE(from_device.status().message().find("zero.pem"), std::string::npos) << from_device.status().ToString();
  auto directory = TrustStore::LoadDirectory(trust_dir.path());
  ASSERT_TRUE(directory.ok()) << directory.status().ToString();
  EXPECT_EQ(directory->keys().size(), 1u);
}

TEST(VerifierTest, ChangeInASignedFileIsCaughtBesideIgnoredOnes) {
  // A flipped byte in an ignored file changes nothing; in a signed file it is caught.
  Vector v = AllVectors()[8];
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  testing::FlipByte(model + "/signme-1", 0);
  auto manifest = VerifyVector(v, model, testing::TrustFor(v));
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("\"signme-1\""), std::string::npos);
}

TEST(VerifierTest, KnownDigestsReplaceTheReadAndAreStillCompared) {
  // The import hands over the digests it computed while copying: those ranges are not read
  // again, and a wrong one is refused like a changed file.
  Vector v = AllVectors()[8];
  TempDir tmp;
  std::string model = testing::CopyVector(v, tmp.path());
  std::string bytes = testing::ReadFile(model + "/signme-1");
  KnownDigests known;
  std::string key = RangeKey("signme-1", 0, bytes.size());
  known[key] = HexDecode(testing::Sha256Hex(bytes)).value();
  testing::FlipByte(model + "/signme-1", 0);  // only the known digest can make this verify
  auto manifest = VerifyVector(v, model, testing::TrustFor(v), &known);
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();

  known[key] = HexDecode(testing::Sha256Hex("other bytes")).value();
  manifest = VerifyVector(v, model, testing::TrustFor(v), &known);
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("\"signme-1\""), std::string::npos);
}

}  // namespace
}  // namespace kimi::models
