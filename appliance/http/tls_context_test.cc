#include "http/tls_context.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "auth/self_signed_certificate.h"

namespace kimi::http {
namespace {

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kimi_tls_context_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  config::TlsConfig Make(const std::string& name) {
    auth::SelfSignedSpec spec;
    spec.cert_path = (dir_ / (name + "-cert.pem")).string();
    spec.key_path = (dir_ / (name + "-key.pem")).string();
    EXPECT_TRUE(auth::WriteSelfSignedCertificate(spec).ok());
    config::TlsConfig c;
    c.cert_file = spec.cert_path;
    c.key_file = spec.key_path;
    return c;
  }

  std::filesystem::path dir_;
};

TEST_F(TlsContextTest, LoadsAMatchingPair) {
  Result<std::unique_ptr<TlsContext>> ctx = TlsContext::Load(Make("a"));
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  EXPECT_NE((*ctx)->get(), nullptr);
  EXPECT_NE((*ctx)->summary().find("CN=kimi-appliance"), std::string::npos) << (*ctx)->summary();
}

TEST_F(TlsContextTest, RefusesAKeyOfAnotherCertificate) {
  config::TlsConfig a = Make("a");
  a.key_file = Make("b").key_file;
  Result<std::unique_ptr<TlsContext>> ctx = TlsContext::Load(a);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(ctx.status().message().find("does not match the certificate"), std::string::npos) << ctx.status().message();
}

TEST_F(TlsContextTest, NamesAnUnreadableFile) {
  config::TlsConfig a = Make("a");
  a.cert_file = (dir_ / "missing.pem").string();
  Result<std::unique_ptr<TlsContext>> ctx = TlsContext::Load(a);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.status().message().find("cannot read the TLS certificate " + a.cert_file), std::string::npos)
      << ctx.status().message();
  a = Make("a2");
  a.cert_file = a.key_file;  // a key where the certificate should be
  ctx = TlsContext::Load(a);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.status().message().find("is not a PEM certificate"), std::string::npos) << ctx.status().message();
}

}  // namespace
}  // namespace kimi::http
