#include "auth/self_signed_certificate.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

namespace kimi::auth {
namespace {

class SelfSignedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kimi_selfsigned_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    spec_.cert_path = (dir_ / "cert.pem").string();
    spec_.key_path = (dir_ / "key.pem").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  SelfSignedSpec spec_;
};

TEST_F(SelfSignedTest, WritesAKeyOnlyTheOwnerReadsAndACertificateNamingLocalhostAndExtraNames) {
  spec_.names = {"appliance.example", "10.1.2.3", "localhost"};
  ASSERT_TRUE(WriteSelfSignedCertificate(spec_).ok());
  struct stat st {};
  ASSERT_EQ(::stat(spec_.key_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::FILE* f = std::fopen(spec_.cert_path.c_str(), "r");
  ASSERT_NE(f, nullptr);
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "appliance.example", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "other.example", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "10.1.2.3", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "10.1.2.4", 0), 0);
  EXPECT_EQ(X509_get_signature_nid(cert), NID_ecdsa_with_SHA256);
  EXPECT_EQ(X509_check_issued(cert, cert), X509_V_OK);  // self-signed
  X509_free(cert);
}

TEST_F(SelfSignedTest, RefusesToReplaceFilesUnlessAsked) {
  ASSERT_TRUE(WriteSelfSignedCertificate(spec_).ok());
  EXPECT_EQ(WriteSelfSignedCertificate(spec_).code(), Status::Code::kAlreadyExists);
  spec_.overwrite = true;
  EXPECT_TRUE(WriteSelfSignedCertificate(spec_).ok());
}

TEST_F(SelfSignedTest, RefusesNamesThatAreNeitherHostsNorAddresses) {
  spec_.names = {"ok.example,DNS:evil.example"};
  EXPECT_EQ(WriteSelfSignedCertificate(spec_).code(), Status::Code::kInvalidArgument);
  spec_.names = {};
  spec_.valid_days = 0;
  EXPECT_EQ(WriteSelfSignedCertificate(spec_).code(), Status::Code::kInvalidArgument);
}

TEST(SubjectAltNamesTest, DefaultsFirstWithoutRepeats) {
  std::vector<std::string> san = SubjectAltNames({"::1", "box.local", "192.168.0.9"});
  std::vector<std::string> want = {"DNS:localhost", "IP:127.0.0.1", "IP:::1", "DNS:box.local", "IP:192.168.0.9"};
  EXPECT_EQ(san, want);
}

}  // namespace
}  // namespace kimi::auth
