// Certificate-mode signatures: which leaves may sign models (oms_code_signing.h) and the
// signers a trusted CA can be pinned to (oms_identity.h, "Signer:" lines in the trust store).
#include <gtest/gtest.h>

#include <filesystem>

#include "models/oms_code_signing.h"
#include "models/oms_identity.h"
#include "models/oms_keys.h"
#include "models/oms_signer.h"
#include "models/oms_test_support.h"
#include "models/oms_verifier.h"

namespace kimi::models {
namespace {

using testing::CertificateSpec;
using testing::MakeCertificate;
using testing::TempDir;
using testing::TestCertificate;

TestCertificate Root() { return MakeCertificate({.subject = "CN=Example Root,O=Example", .ca = true}, nullptr); }

CertificateSpec CodeSigning(std::string subject, std::string alt_names = "") {
  return {.subject = std::move(subject), .extended_key_usage = "codeSigning", .subject_alt_names = std::move(alt_names)};
}

// Signs a one-file model with `leaf` (and `intermediates` after it in the bundle) and
// verifies it against `trust`.
Result<VerifiedManifest> SignAndVerify(const TestCertificate& leaf, const TrustStore& trust,
                                       std::vector<const TestCertificate*> intermediates = {}) {
  TempDir dir;
  std::filesystem::create_directories(dir / "model");
  testing::WriteFile(dir / "model/weights.bin", "weights");
  SignRequest sign;
  sign.model_path = dir / "model";
  sign.private_key = leaf.key;
  sign.certificate_chain.push_back(leaf.cert);
  for (const TestCertificate* c : intermediates) sign.certificate_chain.push_back(c->cert);
  Result<SignResult> signed_model = SignModel(sign);
  if (!signed_model.ok()) return signed_model.status();
  VerifyRequest verify;
  verify.model_path = dir / "model";
  return ModelVerifier::Verify(verify, trust);
}

// The same, against a trust store read from `trust_pem` (file "trust.pem").
Result<VerifiedManifest> SignAndVerify(const TestCertificate& leaf, const std::string& trust_pem,
                                       std::vector<const TestCertificate*> intermediates = {}) {
  TrustStore trust;
  KIMI_RETURN_IF_ERROR(trust.AddPem(trust_pem, "trust.pem"));
  return SignAndVerify(leaf, trust, std::move(intermediates));
}

void ExpectRefused(const Result<VerifiedManifest>& result, const std::string& reason) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Status::Code::kPermissionDenied) << result.status().ToString();
  EXPECT_NE(result.status().message().find(reason), std::string::npos) << result.status().message();
}

TEST(CertificateSignerTest, TlsServerCertificateFromATrustedCaIsRefused) {
  const TestCertificate root = Root();
  const TestCertificate server =
      MakeCertificate({.subject = "CN=www.example.com", .extended_key_usage = "serverAuth",
                       .subject_alt_names = "DNS:www.example.com"}, &root);
  ExpectRefused(SignAndVerify(server, root.Pem()),
                "signing certificate CN=www.example.com is not a code-signing certificate: its extended key usage is "
                "serverAuth; a model signer needs codeSigning");
}

TEST(CertificateSignerTest, CodeSigningCertificateFromTheSameCaIsAccepted) {
  const TestCertificate root = Root();
  const TestCertificate signer = MakeCertificate(CodeSigning("CN=release,O=Example"), &root);
  Result<VerifiedManifest> verified = SignAndVerify(signer, root.Pem());
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(verified->signer().kind, SignerIdentity::Kind::kCertificate);
  EXPECT_NE(verified->signer().description.find("certificate CN=release,O=Example issued by CN=Example Root,O=Example"),
            std::string::npos)
      << verified->signer().description;
}

TEST(CertificateSignerTest, DigitalSignatureAloneIsNotEnough) {
  // What the old rule accepted: key usage digitalSignature and no extended key usage.
  const TestCertificate root = Root();
  const TestCertificate leaf = MakeCertificate({.subject = "CN=any-signer"}, &root);
  ExpectRefused(SignAndVerify(leaf, root.Pem()), "CN=any-signer is not a code-signing certificate: it has no extended key usage");
}

TEST(CertificateSignerTest, KeyUsageWithoutDigitalSignatureIsRefused) {
  const TestCertificate root = Root();
  CertificateSpec spec = CodeSigning("CN=encipher-only");
  spec.key_usage = "keyEncipherment";
  const TestCertificate leaf = MakeCertificate(spec, &root);
  ExpectRefused(SignAndVerify(leaf, root.Pem()), "has a key usage without digitalSignature");
}

TEST(CertificateSignerTest, CodeSigningWithoutKeyUsageExtensionIsAccepted) {
  const TestCertificate root = Root();
  CertificateSpec spec = CodeSigning("CN=no-key-usage");
  spec.key_usage.clear();
  Result<VerifiedManifest> verified = SignAndVerify(MakeCertificate(spec, &root), root.Pem());
  EXPECT_TRUE(verified.ok()) << verified.status().ToString();
}

TEST(CertificateSignerTest, IntermediateRestrictedToTlsCannotVouchForASigner) {
  // The chain is verified under the model-signing purpose: a CA whose extended key usage
  // excludes codeSigning issues no model signer, whatever the leaf says.
  const TestCertificate root = Root();
  const TestCertificate tls_ca =
      MakeCertificate({.subject = "CN=TLS Issuing CA", .ca = true, .extended_key_usage = "serverAuth"}, &root);
  const TestCertificate leaf = MakeCertificate(CodeSigning("CN=release"), &tls_ca);
  ExpectRefused(SignAndVerify(leaf, root.Pem(), {&tls_ca}), "untrusted certificate chain: CA CN=TLS Issuing CA may not vouch for code signing: its extended key usage is serverAuth");

  const TestCertificate code_ca =
      MakeCertificate({.subject = "CN=Code Issuing CA", .ca = true, .extended_key_usage = "codeSigning"}, &root);
  const TestCertificate good = MakeCertificate(CodeSigning("CN=release"), &code_ca);
  Result<VerifiedManifest> verified = SignAndVerify(good, root.Pem(), {&code_ca});
  EXPECT_TRUE(verified.ok()) << verified.status().ToString();
}

TEST(CertificateSignerTest, PinnedEmailRefusesAnotherSignerAndAcceptsTheNamedOne) {
  const TestCertificate root = Root();
  const std::string trust = "Signer: email=release@models.example.com\n" + root.Pem();
  const TestCertificate other = MakeCertificate(CodeSigning("CN=intern", "email:intern@models.example.com"), &root);
  ExpectRefused(SignAndVerify(other, trust),
                "signer not allowed: the certificate (subject CN=intern; email:intern@models.example.com) matches none "
                "of the signers the trust store pins to CA CN=Example Root,O=Example (trust.pem): "
                "email=release@models.example.com");
  const TestCertificate release = MakeCertificate(CodeSigning("CN=release", "email:release@models.example.com"), &root);
  Result<VerifiedManifest> verified = SignAndVerify(release, trust);
  EXPECT_TRUE(verified.ok()) << verified.status().ToString();
}

TEST(CertificateSignerTest, PinnedSubjectIsMatchedExactly) {
  const TestCertificate root = Root();
  const std::string trust = "# the release pipeline only\nsigner: subject=CN=release,O=Example\n" + root.Pem();
  EXPECT_TRUE(SignAndVerify(MakeCertificate(CodeSigning("CN=release,O=Example"), &root), trust).ok());
  ExpectRefused(SignAndVerify(MakeCertificate(CodeSigning("CN=release,O=Example Evil"), &root), trust),
                "signer not allowed: the certificate (subject CN=release,O=Example Evil)");
}

TEST(CertificateSignerTest, PinnedUriGlobAndDnsGlob) {
  const TestCertificate root = Root();
  const std::string trust = "Signer: uri=https://ci.example.com/models/*\nSigner: dns=*.signers.example.com\n" + root.Pem();
  EXPECT_TRUE(SignAndVerify(MakeCertificate(CodeSigning("CN=ci", "URI:https://ci.example.com/models/k3/release"), &root),
                            trust).ok());
  EXPECT_TRUE(SignAndVerify(MakeCertificate(CodeSigning("CN=host", "DNS:Build1.Signers.example.com"), &root), trust).ok());
  ExpectRefused(SignAndVerify(MakeCertificate(CodeSigning("CN=ci", "URI:https://ci.example.com/other/x"), &root), trust),
                "signer not allowed");
  ExpectRefused(SignAndVerify(MakeCertificate(CodeSigning("CN=host", "DNS:a.b.signers.example.com"), &root), trust),
                "signer not allowed");
}

TEST(CertificateSignerTest, PinsOnTheRootHoldThroughAnIntermediate) {
  const TestCertificate root = Root();
  const TestCertificate issuing = MakeCertificate({.subject = "CN=Issuing CA", .ca = true}, &root);
  const std::string trust = "Signer: email=release@example.com\n" + root.Pem();
  EXPECT_TRUE(SignAndVerify(MakeCertificate(CodeSigning("CN=r", "email:release@example.com"), &issuing), trust, {&issuing}).ok());
  ExpectRefused(SignAndVerify(MakeCertificate(CodeSigning("CN=o", "email:other@example.com"), &issuing), trust, {&issuing}),
                "pins to CA CN=Example Root,O=Example");
}

TEST(CertificateSignerTest, ARootPinnedInOneFileIsPinnedEverywhere) {
  const TestCertificate root = Root();
  TrustStore trust;
  ASSERT_TRUE(trust.AddPem(root.Pem(), "plain.pem").ok());
  ASSERT_TRUE(trust.AddPem("Signer: email=release@example.com\n" + root.Pem(), "pinned.pem").ok());
  ASSERT_EQ(trust.cas().size(), 2u);
  ExpectRefused(SignAndVerify(MakeCertificate(CodeSigning("CN=o", "email:other@example.com"), &root), trust),
                "pins to CA CN=Example Root,O=Example (pinned.pem)");
  EXPECT_TRUE(SignAndVerify(MakeCertificate(CodeSigning("CN=r", "email:release@example.com"), &root), trust).ok());
}

TEST(CertificateSignerTest, APinnedRootSigningWithItsOwnKeyMustMatchItsPins) {
  const TestCertificate root = MakeCertificate(
      {.subject = "CN=Signing Root", .ca = true, .extended_key_usage = "codeSigning", .subject_alt_names = "email:root@example.com"},
      nullptr);
  ExpectRefused(SignAndVerify(root, "Signer: email=release@example.com\n" + root.Pem()), "signer not allowed");
  EXPECT_TRUE(SignAndVerify(root, "Signer: email=root@example.com\n" + root.Pem()).ok());
}

TEST(TrustStoreSignerLinesTest, AFileWhosePinsCannotBeHonouredAddsNothing) {
  const TestCertificate root = Root();
  const std::string key_pem = PublicKeyPem(root.key.get());
  const struct {
    std::string text;
    std::string reason;
  } cases[] = {
      {"Signer: mail=a@example.com\n" + root.Pem(), "unknown field \"mail\""},
      {"Signers: email=a@example.com\n" + root.Pem(), "is not a \"Signer: <field>=<pattern>\" line"},
      {"Signer: email=\n" + root.Pem(), "has an empty email"},
      {root.Pem() + "Signer: email=a@example.com\n", "after the last block pin nothing"},
      {"Signer: email=a@example.com\n" + key_pem, "stand above a PUBLIC KEY block"},
      {root.Pem() + "Signer: dns=x\n" + key_pem, "stand above a PUBLIC KEY block"},
  };
  for (const auto& c : cases) {
    TrustStore trust;
    Status s = trust.AddPem(c.text, "bad.pem");
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.message();
    EXPECT_TRUE(trust.empty());
  }
}

TEST(TrustStoreSignerLinesTest, PinsBelongToTheCertificateBelowThem) {
  const TestCertificate a = Root();
  const TestCertificate b = MakeCertificate({.subject = "CN=Other Root", .ca = true}, nullptr);
  TrustStore trust;
  ASSERT_TRUE(trust.AddPem("comment\nSigner: email=a@example.com\nSigner: subject=CN=x\n" + a.Pem() + b.Pem(), "f.pem").ok());
  ASSERT_EQ(trust.cas().size(), 2u);
  ASSERT_EQ(trust.cas()[0].signers.size(), 2u);
  EXPECT_EQ(trust.cas()[0].signers[0].ToString(), "email=a@example.com");
  EXPECT_EQ(trust.cas()[0].signers[1].ToString(), "subject=CN=x");
  EXPECT_TRUE(trust.cas()[1].signers.empty());
}

TEST(SignerPatternTest, GlobsStayWithinTheirSeparator) {
  EXPECT_TRUE(GlobMatches("*@example.com", "release@example.com", '@', false));
  EXPECT_FALSE(GlobMatches("*@example.com", "a@evil.org@example.com", '@', false));
  EXPECT_FALSE(GlobMatches("*@example.com", "release@example.com.evil", '@', false));
  EXPECT_TRUE(GlobMatches("*.example.com", "A.Example.COM", '.', true));
  EXPECT_FALSE(GlobMatches("*.example.com", "a.b.example.com", '.', true));
  EXPECT_FALSE(GlobMatches("*.example.com", "A.EXAMPLE.com", '.', false));
  EXPECT_TRUE(GlobMatches("https://ci/*", "https://ci/a/b", '\0', false));
  EXPECT_TRUE(GlobMatches("a*b*c", "abbbc", '\0', false));
  EXPECT_FALSE(GlobMatches("a*b*c", "abbb", '\0', false));
  EXPECT_TRUE(GlobMatches("exact", "exact", '\0', false));
  EXPECT_FALSE(GlobMatches("exact", "exactly", '\0', false));
  // Many stars against a long name: answered without exponential backtracking.
  EXPECT_FALSE(GlobMatches(std::string(30, '*') + "b", std::string(4000, 'a'), '\0', false));
}

TEST(SignerPatternTest, ParsesTheFourFieldsAndRefusesOthers) {
  EXPECT_EQ(ParseSignerPattern("subject=CN=a,O=b")->ToString(), "subject=CN=a,O=b");
  EXPECT_EQ(ParseSignerPattern("uri=https://x/*")->field, SignerPattern::Field::kUri);
  EXPECT_EQ(ParseSignerPattern("dns=*.x")->field, SignerPattern::Field::kDns);
  EXPECT_FALSE(ParseSignerPattern("email").ok());
  EXPECT_FALSE(ParseSignerPattern("ip=10.0.0.1").ok());
  EXPECT_FALSE(ParseSignerPattern("email=").ok());
}

TEST(CertificateSignerTest, CheckCodeSigningLeafNamesEveryUsage) {
  const TestCertificate root = Root();
  const TestCertificate both =
      MakeCertificate({.subject = "CN=tls", .extended_key_usage = "serverAuth,clientAuth"}, &root);
  Status s = CheckCodeSigningLeaf(both.cert.get());
  EXPECT_NE(s.message().find("its extended key usage is serverAuth, clientAuth"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckCodeSigningLeaf(MakeCertificate(CodeSigning("CN=ok"), &root).cert.get()).ok());
}

TEST(CertificateSignerTest, SigningRefusesAChainWhoseLeafIsNotTheKeys) {
  const TestCertificate root = Root();
  const TestCertificate leaf = MakeCertificate(CodeSigning("CN=release"), &root);
  TempDir dir;
  testing::WriteFile(dir / "weights.bin", "w");
  SignRequest sign;
  sign.model_path = dir / "weights.bin";
  sign.private_key = root.key;
  sign.certificate_chain = {leaf.cert};
  Result<SignResult> result = SignModel(sign);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("is not the signing key's"), std::string::npos) << result.status().message();
}

}  // namespace
}  // namespace kimi::models
