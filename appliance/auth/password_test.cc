#include "auth/password.h"

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

// The smallest parameters libsodium allows keep the test fast; the algorithm is the same.
PasswordParams Fast() { return PasswordParams{1, 8192, 12}; }

TEST(PasswordTest, HashVerifiesOnlyTheSamePassword) {
  Result<std::string> hash = HashPassword("correct horse battery", Fast());
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  EXPECT_EQ(hash->rfind("$argon2id$", 0), 0u);
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse battery"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse batterz"));
  EXPECT_FALSE(VerifyPassword(*hash, ""));
  EXPECT_FALSE(VerifyPassword("not a hash", "correct horse battery"));
}

TEST(PasswordTest, SaltMakesEveryHashDifferent) {
  EXPECT_NE(*HashPassword("same password here", Fast()), *HashPassword("same password here", Fast()));
}

TEST(PasswordTest, ParametersBelowTheMinimumAreRefused) {
  EXPECT_FALSE(HashPassword("whatever password", PasswordParams{0, 8192, 12}).ok());
}

TEST(PasswordTest, Rules) {
  PasswordParams p = Fast();
  EXPECT_TRUE(CheckPasswordRules("alice", "a-long-enough-one", p).ok());
  EXPECT_FALSE(CheckPasswordRules("alice", "short", p).ok());
  EXPECT_FALSE(CheckPasswordRules("alice", "my-alice-password", p).ok());
  EXPECT_FALSE(CheckPasswordRules("alice", "abababababababab", p).ok());
  EXPECT_FALSE(CheckPasswordRules("alice", std::string(1025, 'x') + "yz", p).ok());
}

TEST(PasswordTest, OneTimePasswordsPassTheRules) {
  std::string a = GenerateOneTimePassword();
  EXPECT_EQ(a.size(), 20u);
  EXPECT_NE(a, GenerateOneTimePassword());
  EXPECT_TRUE(CheckPasswordRules("admin", a, PasswordParams{}).ok());
}

}  // namespace
}  // namespace kimi::auth
