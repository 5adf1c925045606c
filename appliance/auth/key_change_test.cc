#include "auth/key_change.h"

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

KeyRecord Key() {
  KeyRecord k;
  k.id = "key_1";
  k.name = "ci";
  k.role = "user";
  k.models = {"m-a"};
  k.limits.tokens_per_day = 1000;
  return k;
}

TEST(KeyChangeTest, OnlyWhatTheChangeNamesIsWritten) {
  KeyChange change;
  EXPECT_TRUE(change.empty());
  change.limits[1] = 500;  // tokens_per_minute
  EXPECT_FALSE(change.empty());
  KeyRecord after = ApplyKeyChange(Key(), change);
  EXPECT_EQ(after.role, "user");
  EXPECT_EQ(after.models, std::vector<std::string>{"m-a"});
  EXPECT_EQ(after.limits.tokens_per_minute, 500);
  EXPECT_EQ(after.limits.tokens_per_day, 1000);
}

TEST(KeyChangeTest, TheDescriptionNamesEachDifferenceBeforeAndAfter) {
  KeyChange change;
  change.role = Role::kAuditor;
  change.models = std::vector<std::string>{};
  change.limits[2] = 0;  // tokens_per_day lifted
  KeyRecord before = Key();
  KeyRecord after = ApplyKeyChange(before, change);
  EXPECT_EQ(DescribeKeyChange(before, after), "role user -> auditor; models m-a -> *; tokens_per_day 1000 -> 0");
  EXPECT_EQ(DescribeKeyChange(before, before), "");
}

}  // namespace
}  // namespace kimi::auth
