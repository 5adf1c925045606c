#include "models/oms_encoding.h"

#include <gtest/gtest.h>

namespace kimi::models {
namespace {

TEST(Base64Test, RoundTripsRfc4648Vectors) {
  const std::pair<std::string, std::string> cases[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : cases) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, RefusesMalformedText) {
  EXPECT_FALSE(Base64Decode("Zm9").ok());       // length
  EXPECT_FALSE(Base64Decode("Zm9v\n").ok());    // whitespace
  EXPECT_FALSE(Base64Decode("Zm=v").ok());      // padding in the middle
  EXPECT_FALSE(Base64Decode("Zm9-").ok());      // URL-safe alphabet
  EXPECT_FALSE(Base64Decode("Zh==").ok());      // stray bits under the padding
  EXPECT_FALSE(Base64Decode("Zm9vZg==Zm9v").ok());
}

TEST(HexTest, RoundTripsAndRefusesBadDigits) {
  EXPECT_EQ(HexEncode(std::string("\x00\xff\x10", 3)), "00ff10");
  EXPECT_EQ(*HexDecode("00FF10"), std::string("\x00\xff\x10", 3));
  EXPECT_FALSE(HexDecode("abc").ok());
  EXPECT_FALSE(HexDecode("zz").ok());
}

}  // namespace
}  // namespace kimi::models
