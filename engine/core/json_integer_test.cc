#include "kimi/json_integer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <limits>

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;

TEST(JsonInteger, IntegersAndWholeFloatsWithinInt64) {
  EXPECT_EQ(JsonInteger(Json::parse("7")), 7);
  EXPECT_EQ(JsonInteger(Json::parse("-7")), -7);
  EXPECT_EQ(JsonInteger(Json::parse("3.0")), 3);
  EXPECT_EQ(JsonInteger(Json::parse("9223372036854775807")), INT64_MAX);
  EXPECT_EQ(JsonInteger(Json::parse("-9223372036854775808")), INT64_MIN);
}

// 2^63 as an integer was read as -2^63 ("max_tokens must be at least 1 (got -9223372036854775808)").
TEST(JsonInteger, NothingPastInt64OrWithAFractionOrNotANumber) {
  EXPECT_EQ(JsonInteger(Json::parse("9223372036854775808")), std::nullopt);
  EXPECT_EQ(JsonInteger(Json::parse("18446744073709551615")), std::nullopt);
  EXPECT_EQ(JsonInteger(Json::parse("9223372036854775808.0")), std::nullopt);
  EXPECT_EQ(JsonInteger(Json(std::numeric_limits<double>::infinity())), std::nullopt);
  EXPECT_EQ(JsonInteger(Json::parse("2.5")), std::nullopt);
  EXPECT_EQ(JsonInteger(Json::parse("\"7\"")), std::nullopt);
  EXPECT_EQ(JsonInteger(Json::parse("true")), std::nullopt);
}

}  // namespace
}  // namespace kimi
