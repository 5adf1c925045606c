#include "cli/model_commands.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>

#include "models/oms_test_support.h"

namespace kimi::cli {
namespace {

namespace fs = std::filesystem;
using models::testing::TempDir;

struct CommandRun {
  int code;
  std::string out;
  std::string err;
};

using Command = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

template <typename Fn>
CommandRun Call(Fn fn, std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = fn(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(ModelCommandsTest, KeygenSignVerifyAndRefuse) {
  TempDir dir;
  CommandRun keygen = Call(static_cast<Command>(RunKeygen),
                    {"--out", dir / "demo"});
  ASSERT_EQ(keygen.code, 0) << keygen.err;
  struct stat st {};
  ASSERT_EQ(stat((dir / "demo.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(keygen.out.find("fingerprint: sha256:"), std::string::npos);
  // A second keygen must not overwrite the key.
  CommandRun again = Call(static_cast<Command>(RunKeygen),
                   {"--out", dir / "demo"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("exists"), std::string::npos);

  fs::create_directories(dir / "model");
  models::testing::WriteFile(dir / "model/weights.bin", std::string(5000, 'x'));
  auto sign = static_cast<Command>(RunModelSign);
  auto verify = static_cast<Command>(RunModelVerify);
  CommandRun signed_run = Call(sign, {"--key", dir / "demo.pem", dir / "model"});
  ASSERT_EQ(signed_run.code, 0) << signed_run.err;
  EXPECT_TRUE(fs::exists(dir / "model/model.sig"));

  CommandRun ok = Call(verify, {"--key", dir / "demo.pub.pem", dir / "model"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("OK "), std::string::npos);
  EXPECT_NE(ok.out.find("weights.bin"), std::string::npos);
  EXPECT_NE(ok.err.find("verifying: "), std::string::npos);  // progress

  fs::create_directories(dir / "trust");
  fs::copy(dir / "demo.pub.pem", dir / "trust/demo.pem");
  EXPECT_EQ(Call(verify, {"--trust-dir", dir / "trust", "--quiet", dir / "model"}).code, 0);

  models::testing::FlipByte(dir / "model/weights.bin", 10);
  CommandRun refused = Call(verify, {"--key", dir / "demo.pub.pem", "--quiet", dir / "model"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("REFUSED"), std::string::npos);
  EXPECT_NE(refused.err.find("weights.bin"), std::string::npos);

  EXPECT_EQ(Call(verify, {"--bogus", dir / "model"}).code, 2);
  EXPECT_EQ(Call(sign, {dir / "model"}).code, 2);  // --key is required
}

// Import media are untrusted: a file whose name carries terminal escapes and a line break is
// refused with its name shown as text, so it can neither recolour the operator's terminal nor
// forge a line of output.
TEST(ModelCommandsTest, RefusalShowsAForeignFileNameAsText) {
  TempDir dir;
  ASSERT_EQ(Call(static_cast<Command>(RunKeygen), {"--out", dir / "demo"}).code, 0);
  fs::create_directories(dir / "model");
  models::testing::WriteFile(dir / "model/weights.bin", std::string(5000, 'x'));
  ASSERT_EQ(Call(static_cast<Command>(RunModelSign), {"--key", dir / "demo.pem", dir / "model"}).code, 0);
  models::testing::WriteFile(dir / "model/evil\x1b[31mRED\nOK forged", "zz");
  CommandRun refused =
      Call(static_cast<Command>(RunModelVerify), {"--key", dir / "demo.pub.pem", "--quiet", dir / "model"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(refused.err.find('\x1b'), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find('\n'), refused.err.size() - 1) << refused.err;  // one line
  EXPECT_NE(refused.err.find("evil\\u001b[31mRED\\u000aOK forged"), std::string::npos) << refused.err;
}

// A signed file's name is shown as text in the success listing too: the signer chose it, and
// it must not recolour the terminal or forge a line of the listing.
TEST(ModelCommandsTest, TheListingShowsSignedFileNamesAsText) {
  TempDir dir;
  ASSERT_EQ(Call(static_cast<Command>(RunKeygen), {"--out", dir / "demo"}).code, 0);
  fs::create_directories(dir / "model");
  models::testing::WriteFile(dir / "model/weights.bin", std::string(5000, 'x'));
  models::testing::WriteFile(dir / "model/n\x1b[31mOK\x1b]0;pwned\x07\r\nOK fake", "zz");
  ASSERT_EQ(Call(static_cast<Command>(RunModelSign), {"--key", dir / "demo.pem", "--quiet", dir / "model"}).code, 0);
  CommandRun listed = Call(static_cast<Command>(RunModelVerify), {"--key", dir / "demo.pub.pem", "--quiet", dir / "model"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  for (char c : {'\x1b', '\x07', '\r'}) EXPECT_EQ(listed.out.find(c), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("\nOK fake"), std::string::npos) << listed.out;  // no forged line
  EXPECT_NE(listed.out.find("\\u000aOK fake"), std::string::npos) << listed.out;
}

// By default a file larger than the shard size (4 MiB for a small model) is signed in shards
// that verification hashes on several threads; a changed byte is named with its shard's range.
// --files signs one resource per file, as verifiers before the shard serialization expect.
TEST(ModelCommandsTest, SignsInShardsByDefaultAndInWholeFilesWithFiles) {
  TempDir dir;
  ASSERT_EQ(Call(static_cast<Command>(RunKeygen), {"--out", dir / "demo"}).code, 0);
  fs::create_directories(dir / "model");
  models::testing::WriteFile(dir / "model/weights.bin", std::string((9u << 20) + 5, 'w'));
  models::testing::WriteFile(dir / "model/config.json", "{}");
  auto sign = static_cast<Command>(RunModelSign);
  auto verify = static_cast<Command>(RunModelVerify);
  const std::vector<std::string> verify_args = {"--key", dir / "demo.pub.pem", "--threads", "2", "--quiet", dir / "model"};

  CommandRun sharded = Call(sign, {"--key", dir / "demo.pem", "--quiet", dir / "model"});
  ASSERT_EQ(sharded.code, 0) << sharded.err;
  EXPECT_NE(sharded.out.find("resources: 4,"), std::string::npos) << sharded.out;  // config.json + 3 shards
  CommandRun ok = Call(verify, verify_args);
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("  weights.bin:0:4194304\n"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("  weights.bin:8388608:9437189\n"), std::string::npos) << ok.out;

  models::testing::FlipByte(dir / "model/weights.bin", (4u << 20) + 7);
  CommandRun refused = Call(verify, verify_args);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("\"weights.bin (bytes 4194304-8388608)\""), std::string::npos) << refused.err;

  CommandRun whole = Call(sign, {"--key", dir / "demo.pem", "--files", "--quiet", dir / "model"});
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("resources: 2,"), std::string::npos) << whole.out;
  ok = Call(verify, verify_args);
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("  weights.bin\n"), std::string::npos) << ok.out;

  EXPECT_EQ(Call(sign, {"--key", dir / "demo.pem", "--files", "--shard-size", "4096", dir / "model"}).code, 2);
}

TEST(ModelCommandsTest, VerifiesACertificateVectorWithItsCa) {
  auto v = models::testing::AllVectors()[7];
  ASSERT_EQ(v.name, "v1.1.0-certificate");
  TempDir dir;
  std::string model = models::testing::CopyVector(v, dir.path());
  auto verify = static_cast<Command>(RunModelVerify);
  CommandRun ok = Call(verify, {"--ca", models::testing::VectorsDir() + "/keys/ca-cert.pem", "--quiet", model});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("signer: certificate"), std::string::npos) << ok.out;
}

// Certificate mode end to end through the commands: `model sign --certificate` writes the
// chain into the bundle, and `model verify --ca` takes the CA file's Signer: lines as pins.
TEST(ModelCommandsTest, SignsWithACertificateAndVerifiesAgainstAPinnedCa) {
  using models::testing::MakeCertificate;
  TempDir dir;
  const auto root = MakeCertificate({.subject = "CN=Site Root", .ca = true}, nullptr);
  const auto release = MakeCertificate(
      {.subject = "CN=release", .extended_key_usage = "codeSigning", .subject_alt_names = "email:release@site.example"},
      &root);
  const auto tls = MakeCertificate(
      {.subject = "CN=appliance.site.example", .extended_key_usage = "serverAuth", .subject_alt_names = "DNS:appliance.site.example"},
      &root);
  models::testing::WriteFile(dir / "root.pem", root.Pem());
  models::testing::WriteFile(dir / "root-release-only.pem", "Signer: email=release@site.example\n" + root.Pem());
  models::testing::WriteFile(dir / "root-ci-only.pem", "Signer: uri=https://ci.site.example/*\n" + root.Pem());
  for (const auto& [name, cert] : {std::pair{"release", &release}, std::pair{"tls", &tls}}) {
    models::testing::WriteFile(dir / (std::string(name) + ".key"), cert->KeyPem());
    models::testing::WriteFile(dir / (std::string(name) + ".chain.pem"), cert->Pem());
  }
  fs::create_directories(dir / "model");
  models::testing::WriteFile(dir / "model/weights.bin", std::string(300, 'w'));
  auto sign = static_cast<Command>(RunModelSign);
  auto verify = static_cast<Command>(RunModelVerify);

  CommandRun signed_run =
      Call(sign, {"--key", dir / "release.key", "--certificate", dir / "release.chain.pem", "--quiet", dir / "model"});
  ASSERT_EQ(signed_run.code, 0) << signed_run.err;
  EXPECT_NE(models::testing::ReadFile(dir / "model/model.sig").find("x509CertificateChain"), std::string::npos);
  for (const char* ca : {"root.pem", "root-release-only.pem"}) {
    CommandRun ok = Call(verify, {"--ca", dir / ca, "--quiet", dir / "model"});
    EXPECT_EQ(ok.code, 0) << ca << ": " << ok.err;
    EXPECT_NE(ok.out.find("signer: certificate CN=release issued by CN=Site Root"), std::string::npos) << ok.out;
  }
  CommandRun pinned_away = Call(verify, {"--ca", dir / "root-ci-only.pem", "--quiet", dir / "model"});
  EXPECT_EQ(pinned_away.code, 1);
  EXPECT_NE(pinned_away.err.find("REFUSED"), std::string::npos);
  EXPECT_NE(pinned_away.err.find("signer not allowed: the certificate (subject CN=release; email:release@site.example)"),
            std::string::npos)
      << pinned_away.err;

  // The appliance's own TLS certificate, from the same CA, cannot sign a model.
  signed_run = Call(sign, {"--key", dir / "tls.key", "--certificate", dir / "tls.chain.pem", "--quiet", dir / "model"});
  ASSERT_EQ(signed_run.code, 0) << signed_run.err;
  CommandRun tls_signed = Call(verify, {"--ca", dir / "root.pem", "--quiet", dir / "model"});
  EXPECT_EQ(tls_signed.code, 1);
  EXPECT_NE(tls_signed.err.find("is not a code-signing certificate: its extended key usage is serverAuth"),
            std::string::npos)
      << tls_signed.err;

  // A chain that is not the key's is refused at signing.
  CommandRun mismatched =
      Call(sign, {"--key", dir / "tls.key", "--certificate", dir / "release.chain.pem", "--quiet", dir / "model"});
  EXPECT_EQ(mismatched.code, 1);
  EXPECT_NE(mismatched.err.find("is not the signing key's"), std::string::npos) << mismatched.err;
}

}  // namespace
}  // namespace kimi::cli
