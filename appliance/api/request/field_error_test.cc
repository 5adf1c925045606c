#include "api/request/field_error.h"

#include <gtest/gtest.h>

namespace kimi::api::request {
namespace {

TEST(FieldErrorTest, MessageStartsWithTheFieldAndTheFieldIsRecovered) {
  Status s = FieldError("messages[2].tools[0].function.name", "must not start with a digit");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "messages[2].tools[0].function.name must not start with a digit");
  EXPECT_EQ(FieldOfRuleError(s), "messages[2].tools[0].function.name");
  // A message given its field as context (Status::WithContext) names it before a colon.
  EXPECT_EQ(FieldOfRuleError(Status::InvalidArgument("allOf cannot merge these").WithContext("tools[0].function.parameters")),
            "tools[0].function.parameters");
}

TEST(FieldErrorTest, OtherStatusesNameNoField) {
  EXPECT_EQ(FieldOfRuleError(Status::NotFound("model x")), std::nullopt);
  EXPECT_EQ(FieldOfRuleError(Status::InvalidArgument("oneword")), std::nullopt);
  EXPECT_EQ(FieldOfRuleError(Status::OK()), std::nullopt);
}

TEST(FieldErrorTest, PathsAreBuiltFromMembersAndIndices) {
  EXPECT_EQ(Member(Indexed("messages", 3), "tools"), "messages[3].tools");
  EXPECT_EQ(Member("", "model"), "model");
}

TEST(FieldErrorTest, NullCountsAsAbsent) {
  Json body = Json::parse(R"({"a": null, "b": 1})");
  EXPECT_EQ(OptionalMember(body, "a"), nullptr);
  EXPECT_EQ(OptionalMember(body, "missing"), nullptr);
  ASSERT_NE(OptionalMember(body, "b"), nullptr);
  EXPECT_EQ(OptionalMember(Json::array(), "b"), nullptr);
}

TEST(FieldErrorTest, IntegersAcceptIntegralFloatsOnly) {
  int64_t v = 0;
  EXPECT_TRUE(ExpectInteger(Json(3), "n", &v).ok());
  EXPECT_EQ(v, 3);
  EXPECT_TRUE(ExpectInteger(Json(3.0), "n", &v).ok());
  EXPECT_EQ(v, 3);
  EXPECT_EQ(ExpectInteger(Json(3.5), "n", &v).message(), "n must be an integer");
  EXPECT_FALSE(ExpectInteger(Json(true), "n", &v).ok());
  EXPECT_FALSE(ExpectInteger(Json("3"), "n", &v).ok());
  EXPECT_FALSE(ExpectInteger(Json(1e300), "n", &v).ok());
  EXPECT_FALSE(ExpectInteger(Json(uint64_t{1} << 63), "n", &v).ok());
}

TEST(FieldErrorTest, NumbersExcludeBooleans) {
  double d = 0;
  EXPECT_TRUE(ExpectNumber(Json(0.6), "temperature", &d).ok());
  EXPECT_EQ(d, 0.6);
  EXPECT_EQ(ExpectNumber(Json(false), "temperature", &d).message(), "temperature must be a number");
}

TEST(FieldErrorTest, NumbersPrintAsWritten) {
  EXPECT_EQ(NumberText(1.1), "1.1");
  EXPECT_EQ(NumberText(-0.1), "-0.1");
  EXPECT_EQ(NumberText(2.0), "2");
  EXPECT_EQ(NumberText(0.0), "0");
  EXPECT_EQ(NumberText(0.95), "0.95");
}

}  // namespace
}  // namespace kimi::api::request
