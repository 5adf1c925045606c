#include "kimi/json_keys.h"

#include <gtest/gtest.h>

#include <string>

namespace kimi {
namespace {

// The path of the first repeated key, or nothing.
std::optional<std::string> Repeated(std::string_view text) {
  const auto problem = CheckJsonKeys(text);
  if (!problem) return std::nullopt;
  EXPECT_EQ(problem->kind, JsonKeyProblem::Kind::kRepeatedKey);
  return problem->path;
}

TEST(JsonKeys, NoDuplicateNoPath) {
  EXPECT_EQ(Repeated(R"({"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]})"), std::nullopt);
  EXPECT_EQ(Repeated("[]"), std::nullopt);
  EXPECT_EQ(Repeated("not json"), std::nullopt);
}

TEST(JsonKeys, TheFirstRepeatedKeyWithItsPath) {
  EXPECT_EQ(Repeated(R"({"name":"x","role":"user","role":"admin"})"), "$.role");
  EXPECT_EQ(Repeated(R"({"messages":[{"role":"user","content":"a","role":"system"}]})"),
            "$.messages[].role");
  EXPECT_EQ(Repeated(R"({"a":{"b":[1,{"c":1,"d":2,"c":3}]},"a":0})"), "$.a.b[].c");
}

// The parser's decoded key is what counts: an escape spells the same key.
TEST(JsonKeys, EscapedSpellingsAreTheSameKey) {
  EXPECT_EQ(Repeated(R"({"role":"user","\u0072ole":"admin"})"), "$.role");
}

TEST(JsonKeys, LongKeysAreCutInThePath) {
  const std::string key(1000, 'k');
  const auto path = Repeated("{\"" + key + "\":1,\"" + key + "\":2}");
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, "$." + std::string(64, 'k') + "...");
}

// Many distinct keys in one object (a logit_bias map) are checked in one pass.
TEST(JsonKeys, ManyDistinctKeys) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? ",\"" : "\"") + std::to_string(i) + "\":1";
  text += "}";
  EXPECT_EQ(Repeated(text), std::nullopt);
  text.back() = ',';
  text += "\"17\":2}";
  EXPECT_EQ(Repeated(text), "$.17");
}

TEST(JsonKeys, MembersPerObjectAndInAll) {
  const JsonMemberLimits limits{3, 5};
  EXPECT_EQ(CheckJsonKeys(R"({"a":1,"b":2,"c":3})", limits), std::nullopt);
  const auto large = CheckJsonKeys(R"({"x":{"a":1,"b":2,"c":3,"d":4}})", limits);
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(large->kind, JsonKeyProblem::Kind::kObjectTooLarge);
  EXPECT_EQ(large->path, "$.x.d");
  const auto many = CheckJsonKeys(R"([{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2}])", limits);
  ASSERT_TRUE(many.has_value());
  EXPECT_EQ(many->kind, JsonKeyProblem::Kind::kTooManyMembers);
  EXPECT_EQ(many->path, "$[].b");
  // A repeat is reported as such even in an object at its limit.
  EXPECT_EQ(CheckJsonKeys(R"({"a":1,"b":2,"a":3})", limits)->kind, JsonKeyProblem::Kind::kRepeatedKey);
}

}  // namespace
}  // namespace kimi
