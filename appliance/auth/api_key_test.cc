#include "auth/api_key.h"

#include <set>

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

TEST(ApiKeyTest, Base62OfZeroAndMaxAreFixedWidth) {
  std::array<uint8_t, 32> zero{};
  EXPECT_EQ(Base62Encode256(zero), std::string(43, '0'));
  std::array<uint8_t, 32> max{};
  max.fill(0xff);
  // 2^256 - 1 in base 62, computed independently (Python: digits of (1 << 256) - 1).
  EXPECT_EQ(Base62Encode256(max), "yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5rOw8Xp1");
}

TEST(ApiKeyTest, SmallValuesEncodeAsDigits) {
  std::array<uint8_t, 32> n{};
  n[31] = 61;
  EXPECT_EQ(Base62Encode256(n).substr(40), "00z");
  n[31] = 62;
  EXPECT_EQ(Base62Encode256(n).substr(40), "010");
}

TEST(ApiKeyTest, GeneratedKeysHaveTheShapeAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    std::string key = GenerateApiKey();
    EXPECT_TRUE(HasApiKeyShape(key)) << key;
    EXPECT_EQ(key.size(), 8u + 43u);
    seen.insert(key);
  }
  EXPECT_EQ(seen.size(), 50u);
}

TEST(ApiKeyTest, ShapeRejectsJunk) {
  std::string good = GenerateApiKey();
  EXPECT_FALSE(HasApiKeyShape(""));
  EXPECT_FALSE(HasApiKeyShape(good.substr(0, good.size() - 1)));
  EXPECT_FALSE(HasApiKeyShape(good + "a"));
  EXPECT_FALSE(HasApiKeyShape("sk-other" + good.substr(8)));
  std::string bad = good;
  bad[20] = '+';
  EXPECT_FALSE(HasApiKeyShape(bad));
}

TEST(ApiKeyTest, KeyIdsAndRandomHex) {
  std::string id = GenerateKeyId();
  EXPECT_EQ(id.size(), 4u + 16u);
  EXPECT_EQ(id.substr(0, 4), "key_");
  EXPECT_EQ(RandomHex(32).size(), 64u);
  EXPECT_NE(RandomHex(16), RandomHex(16));
}

}  // namespace
}  // namespace kimi::auth
