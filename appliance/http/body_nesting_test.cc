#include "http/body_nesting.h"

#include <string>

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

TEST(BodyNesting, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth("", 10), 0u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}]})", 10), 4u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[[{{{{", "b": "\"[[["})", 10), 1u);
  EXPECT_EQ(JsonNestingDepth(R"(["\\", [[]]])", 10), 3u);
}

TEST(BodyNesting, StopsPastTheLimit) {
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(JsonNestingDepth(deep, 5), 6u);
}

TEST(BodyNesting, RefusesOnlyBeyondTheBound) {
  const std::string at_bound = std::string(kMaxBodyNesting, '[') + std::string(kMaxBodyNesting, ']');
  EXPECT_TRUE(CheckBodyNesting(at_bound).ok());
  const std::string beyond = "[" + at_bound + "]";
  Status refused = CheckBodyNesting(beyond);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("nested deeper than 256"), std::string::npos);
}

}  // namespace
}  // namespace kimi::http
