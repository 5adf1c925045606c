#include "kimi/json_depth.h"

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

}  // namespace
}  // namespace kimi
