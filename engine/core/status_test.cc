#include "kimi/status.h"

#include <gtest/gtest.h>

namespace kimi {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  KIMI_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckPositive(int x) {
  if (x <= 0) return Status::InvalidArgument("not positive");
  return Status::OK();
}

Status CheckAll(int a, int b) {
  KIMI_RETURN_IF_ERROR(CheckPositive(a));
  KIMI_RETURN_IF_ERROR(CheckPositive(b).WithContext("b"));
  return Status::OK();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, NamedConstructorsCarryCodeAndMessage) {
  Status s = Status::NotFound("tensor model.norm.weight");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: tensor model.norm.weight");
  EXPECT_EQ(s.WithContext("shard-1").message(), "shard-1: tensor model.norm.weight");
}

TEST(StatusTest, ResultPropagates) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_TRUE(CheckAll(1, 2).ok());
  EXPECT_EQ(CheckAll(1, -2).message(), "b: not positive");
}

}  // namespace
}  // namespace kimi
