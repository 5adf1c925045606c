#include "auth/usage_report.h"

#include <gtest/gtest.h>

#include "auth/test_auth_store.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDay0 = 1'764'547'200'000;  // 2025-12-01T00:00:00Z

KeyRecord Key(std::string id, std::string name, std::string owner) {
  KeyRecord k;
  k.id = std::move(id);
  k.name = std::move(name);
  k.owner = std::move(owner);
  k.role = "user";
  return k;
}

UsageRowDelta Day(std::string key, int day, int64_t requests, int64_t prompt, int64_t completion) {
  return UsageRowDelta{std::move(key), UsagePeriod::kDay, kDay0 + day * kDayMs, requests, prompt, completion};
}

const std::vector<KeyRecord> kKeys = {Key("key_a", "alpha", "alice"), Key("key_b", "beta", "alice"),
                                      Key("key_c", "gamma", "bob")};

TEST(UsageReportTest, KeyLinesHaveOneValuePerDayAndComeMostTokensFirst) {
  std::vector<UsageRowDelta> rows = {Day("key_a", 0, 1, 10, 5), Day("key_a", 2, 2, 20, 10),
                                     Day("key_c", 1, 3, 100, 50),
                                     Day("key_b", 3, 1, 1, 1) /* outside the 3 days */};
  std::vector<UsageLine> lines = DailyUsageLines(rows, kKeys, kDay0, 3, UsageGrouping::kKey);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].id, "key_c");
  EXPECT_EQ(lines[0].name, "gamma");
  EXPECT_EQ(lines[0].owner, "bob");
  EXPECT_EQ(lines[0].prompt_tokens, (std::vector<int64_t>{0, 100, 0}));
  EXPECT_EQ(lines[0].total_tokens(), 150);
  EXPECT_EQ(lines[1].id, "key_a");
  EXPECT_EQ(lines[1].requests, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(lines[1].completion_tokens, (std::vector<int64_t>{5, 0, 10}));
  EXPECT_EQ(lines[1].total_requests, 3);
  EXPECT_EQ(lines[1].total_tokens(), 45);
}

TEST(UsageReportTest, OwnerLinesAddUpTheirKeysPerDay) {
  std::vector<UsageRowDelta> rows = {Day("key_a", 0, 1, 10, 5), Day("key_b", 0, 2, 7, 3),
                                     Day("key_b", 1, 1, 1, 1), Day("key_c", 1, 1, 4, 4)};
  std::vector<UsageLine> lines = DailyUsageLines(rows, kKeys, kDay0, 2, UsageGrouping::kOwner);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].id, "alice");
  EXPECT_EQ(lines[0].name, "");
  EXPECT_EQ(lines[0].requests, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(lines[0].prompt_tokens, (std::vector<int64_t>{17, 1}));
  EXPECT_EQ(lines[0].total_tokens(), 27);
  EXPECT_EQ(lines[1].id, "bob");
  EXPECT_EQ(lines[1].total_tokens(), 8);
}

// The store answers the rows of a range of days across keys, leaving out months and days
// outside it; with the report they make the series.
TEST(UsageReportTest, TheStoreAnswersEveryKeysDaysOfARange) {
  TestAuthStore test;
  ASSERT_TRUE(test.status().ok()) << test.status().ToString();
  AuthStore& store = *test.store();
  ASSERT_TRUE(store.AddUsage("key_a", kDay0, kDay0, 3, 4).ok());
  ASSERT_TRUE(store.AddUsage("key_a", kDay0 + kDayMs, kDay0, 1, 1).ok());
  ASSERT_TRUE(store.AddUsage("key_b", kDay0 + kDayMs, kDay0, 5, 0).ok());
  ASSERT_TRUE(store.AddUsage("key_b", kDay0 + 5 * kDayMs, kDay0, 9, 9).ok());
  Result<std::vector<UsageRowDelta>> rows = store.UsageRows(UsagePeriod::kDay, kDay0, kDay0 + 2 * kDayMs);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  std::vector<UsageLine> lines = DailyUsageLines(*rows, kKeys, kDay0, 2, UsageGrouping::kKey);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].id, "key_a");
  EXPECT_EQ(lines[0].prompt_tokens, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(lines[1].id, "key_b");
  EXPECT_EQ(lines[1].requests, (std::vector<int64_t>{0, 1}));
  Result<std::vector<UsageRowDelta>> months = store.UsageRows(UsagePeriod::kMonth, kDay0, kDay0 + 1);
  ASSERT_TRUE(months.ok());
  ASSERT_EQ(months->size(), 2u);
  EXPECT_EQ((*months)[1].prompt_tokens, 14);  // key_b: 5 + 9
}

}  // namespace
}  // namespace kimi::auth
