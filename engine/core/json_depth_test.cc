#include "kimi/json_depth.h"
#include "kimi/untrusted_json.h"

#include <string>

#include <gtest/gtest.h>

namespace kimi {
namespace {

TEST(JsonNestingDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth("", 10), 0u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}]})", 10), 4u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[[{{{{", "b": "\"[[["})", 10), 1u);
  EXPECT_EQ(JsonNestingDepth(R"(["\\", [[]]])", 10), 3u);
  EXPECT_EQ(JsonNestingDepth("]]]][[", 10), 2u);  // stray closers do not hide later depth
}

TEST(JsonNestingDepth, StopsPastTheLimit) {
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(JsonNestingDepth(deep, 5), 6u);
}

TEST(UntrustedJson, TextNestedPastTheBoundIsRefusedBeforeAnyParse) {
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const Result<nlohmann::json> refused = ParseUntrustedJson(deep, "event");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(refused.status().message(), "event: JSON nests deeper than 256 levels");
  EXPECT_TRUE(ParseUntrustedJson(deep, "event", 300).ok());
  EXPECT_FALSE(ParseUntrustedJson(std::string(65, '['), "config.json", kMaxFileJsonNesting).ok());
}

TEST(UntrustedJson, ParsesEitherKindOfDocumentAndNamesTextThatIsNotJson) {
  const Result<nlohmann::ordered_json> ordered = ParseUntrustedJson<nlohmann::ordered_json>(R"({"b":1,"a":[2]})", "x");
  ASSERT_TRUE(ordered.ok());
  EXPECT_EQ(ordered->dump(), R"({"b":1,"a":[2]})");
  const Result<nlohmann::json> broken = ParseUntrustedJson(R"({"a":)", "the answer");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message(), "the answer: not valid JSON");
}

}  // namespace
}  // namespace kimi
