#include "kimi/json_keys.h"

#include <gtest/gtest.h>

#include <string>

namespace kimi {
namespace {

TEST(JsonKeys, NoDuplicateNoPath) {
  EXPECT_EQ(FirstDuplicateJsonKey(R"({"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]})"), std::nullopt);
  EXPECT_EQ(FirstDuplicateJsonKey("[]"), std::nullopt);
  EXPECT_EQ(FirstDuplicateJsonKey("not json"), std::nullopt);
}

TEST(JsonKeys, TheFirstRepeatedKeyWithItsPath) {
  EXPECT_EQ(FirstDuplicateJsonKey(R"({"name":"x","role":"user","role":"admin"})"), "$.role");
  EXPECT_EQ(FirstDuplicateJsonKey(R"({"messages":[{"role":"user","content":"a","role":"system"}]})"),
            "$.messages[].role");
  EXPECT_EQ(FirstDuplicateJsonKey(R"({"a":{"b":[1,{"c":1,"d":2,"c":3}]},"a":0})"), "$.a.b[].c");
}

// The parser's decoded key is what counts: an escape spells the same key.
TEST(JsonKeys, EscapedSpellingsAreTheSameKey) {
  EXPECT_EQ(FirstDuplicateJsonKey(R"({"role":"user","\u0072ole":"admin"})"), "$.role");
}

TEST(JsonKeys, LongKeysAreCutInThePath) {
  const std::string key(1000, 'k');
  const auto path = FirstDuplicateJsonKey("{\"" + key + "\":1,\"" + key + "\":2}");
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, "$." + std::string(64, 'k') + "...");
}

// Many distinct keys in one object (a logit_bias map) are checked in one pass.
TEST(JsonKeys, ManyDistinctKeys) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? ",\"" : "\"") + std::to_string(i) + "\":1";
  text += "}";
  EXPECT_EQ(FirstDuplicateJsonKey(text), std::nullopt);
  text.back() = ',';
  text += "\"17\":2}";
  EXPECT_EQ(FirstDuplicateJsonKey(text), "$.17");
}

}  // namespace
}  // namespace kimi
