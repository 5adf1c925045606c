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

}  // namespace
}  // namespace kimi::cli
