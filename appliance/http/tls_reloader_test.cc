#include "http/tls_reloader.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <filesystem>

#include "auth/self_signed_certificate.h"

namespace kimi::http {
namespace {

class TlsReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kimi_tls_reloader_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.cert_file = (dir_ / "cert.pem").string();
    config_.key_file = (dir_ / "key.pem").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A new certificate and key at the configured paths, named `host`.
  void Issue(const std::string& host) {
    auth::SelfSignedSpec spec;
    spec.cert_path = config_.cert_file;
    spec.key_path = config_.key_file;
    spec.common_name = host;
    spec.overwrite = true;
    ASSERT_TRUE(auth::WriteSelfSignedCertificate(spec).ok());
  }
  std::filesystem::path dir_;
  config::TlsConfig config_;
};

TEST_F(TlsReloaderTest, NewFilesServeNewConnectionsAndOpenOnesKeepTheirs) {
  Issue("first.example");
  Result<std::unique_ptr<TlsReloader>> tls = TlsReloader::Load(config_);
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  std::shared_ptr<const TlsContext> before = (*tls)->Current();
  X509* old_cert = SSL_CTX_get0_certificate(before->get());
  SSL* open_connection = SSL_new(before->get());

  Issue("second.example");
  Result<std::string> reloaded = (*tls)->Reload();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_NE((*tls)->Current(), before);
  EXPECT_NE(X509_cmp(SSL_CTX_get0_certificate((*tls)->Current()->get()), old_cert), 0);
  EXPECT_NE(reloaded->find("second.example"), std::string::npos) << *reloaded;
  before.reset();
  // The connection that started before the reload still has its context and certificate.
  EXPECT_EQ(X509_cmp(SSL_get_certificate(open_connection), old_cert), 0);
  SSL_free(open_connection);
}

TEST_F(TlsReloaderTest, ABadNewFileKeepsTheOldCertificateAndSaysWhy) {
  Issue("first.example");
  Result<std::unique_ptr<TlsReloader>> tls = TlsReloader::Load(config_);
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  std::shared_ptr<const TlsContext> before = (*tls)->Current();
  std::filesystem::resize_file(config_.cert_file, 10);  // truncated mid-write, say
  Result<std::string> reloaded = (*tls)->Reload();
  ASSERT_FALSE(reloaded.ok());
  EXPECT_NE(reloaded.status().message().find("keeps serving"), std::string::npos) << reloaded.status().message();
  EXPECT_NE(reloaded.status().message().find(config_.cert_file), std::string::npos) << reloaded.status().message();
  EXPECT_EQ((*tls)->Current(), before);
  EXPECT_NE((*tls)->Current()->summary().find("first.example"), std::string::npos);
}

}  // namespace
}  // namespace kimi::http
