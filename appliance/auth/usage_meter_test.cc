#include "auth/usage_meter.h"

#include <stdlib.h>

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

constexpr int64_t kDayMs = 86'400'000;
// 2026-11-30T23:59:00Z: one minute before a day and a month end.
constexpr int64_t kLastMinuteOfNovember = 1'796'083'140'000;

class UsageMeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-usage-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    auto opened = store::Store::Open(root_ + "/data");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(opened).value();
    ASSERT_TRUE(db_->Migrate(store::AllMigrations()).ok());
    store_ = std::make_unique<AuthStore>(db_.get());
    meter_ = std::make_unique<UsageMeter>(store_.get(), 3, [this] { return now_ms_; });
  }
  void TearDown() override {
    meter_.reset();
    store_.reset();
    db_.reset();
    std::filesystem::remove_all(root_);
  }

  static Principal Key(const std::string& id, KeyLimits limits) {
    Principal p;
    p.kind = Principal::Kind::kApiKey;
    p.id = id;
    p.limits = limits;
    return p;
  }

  std::string root_;
  std::unique_ptr<store::Store> db_;
  std::unique_ptr<AuthStore> store_;
  std::unique_ptr<UsageMeter> meter_;
  int64_t now_ms_ = kLastMinuteOfNovember;
  int64_t retry_ = 0;
};

TEST(UtcPeriodsTest, DayAndMonthBoundaries) {
  EXPECT_EQ(UtcDayStartMs(kLastMinuteOfNovember), kLastMinuteOfNovember - (kDayMs - 60'000));
  EXPECT_EQ(UtcMonthStartMs(kLastMinuteOfNovember), 1'793'491'200'000);      // 2026-11-01
  EXPECT_EQ(NextUtcMonthStartMs(kLastMinuteOfNovember), 1'796'083'200'000);  // 2026-12-01
  EXPECT_EQ(NextUtcMonthStartMs(1'796'083'200'000 + 30 * kDayMs), 1'798'761'600'000);  // 2027-01-01
}

TEST_F(UsageMeterTest, KeyStreamLimitRefusesTheNextOneUntilALeaseEnds) {
  Principal p = Key("key_a", KeyLimits{0, 0, 0, 2});
  auto first = meter_->Begin(p, &retry_);
  auto second = meter_->Begin(p, &retry_);
  ASSERT_TRUE(first.ok() && second.ok());
  auto third = meter_->Begin(p, &retry_);
  ASSERT_EQ(third.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(third.status().message().find("2 concurrent streams"), std::string::npos) << third.status().message();
  EXPECT_EQ(retry_, 1);
  EXPECT_EQ(meter_->InFlight("key_a"), 2);
  first->reset();
  EXPECT_TRUE(meter_->Begin(p, &retry_).ok());  // released again at once: a temporary
  EXPECT_EQ(meter_->InFlight("key_a"), 1);
}

TEST_F(UsageMeterTest, ApplianceLimitCountsEveryKeyAndSession) {
  Principal session;
  session.kind = Principal::Kind::kSession;
  session.id = "alice";
  auto a = meter_->Begin(Key("key_a", {}), &retry_);
  auto b = meter_->Begin(Key("key_b", {}), &retry_);
  auto c = meter_->Begin(session, &retry_);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto d = meter_->Begin(Key("key_c", {}), &retry_);
  ASSERT_EQ(d.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(d.status().message().find("auth.max_concurrent_streams"), std::string::npos);
  c->reset();
  EXPECT_EQ(meter_->InFlight(), 2);
}

TEST_F(UsageMeterTest, DailyQuotaCountsFinishedTokensAndResetsAtMidnight) {
  Principal p = Key("key_a", KeyLimits{0, 100, 0, 0});
  {
    auto lease = meter_->Begin(p, &retry_);
    ASSERT_TRUE(lease.ok());
    ASSERT_TRUE((*lease)->Finish(60, 50).ok());  // crosses the quota: still served
    EXPECT_TRUE((*lease)->Finish(1000, 1000).ok());  // counted once
  }
  auto refused = meter_->Begin(p, &retry_);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("100 tokens per day"), std::string::npos) << refused.status().message();
  EXPECT_EQ(retry_, 60);  // to 00:00 UTC
  EXPECT_EQ(meter_->InFlight(), 0);  // a refusal holds no slot
  Result<KeyUsage> usage = meter_->Usage("key_a");
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->day.requests, 1);
  EXPECT_EQ(usage->day.prompt_tokens, 60);
  EXPECT_EQ(usage->day.completion_tokens, 50);
  EXPECT_EQ(usage->month.tokens(), 110);
  now_ms_ += 60'000;  // a new day, a new month
  EXPECT_TRUE(meter_->Begin(p, &retry_).ok());
  EXPECT_EQ(meter_->Usage("key_a")->month.tokens(), 0);
}

TEST_F(UsageMeterTest, MonthlyQuotaOutlastsTheDay) {
  now_ms_ = UtcMonthStartMs(kLastMinuteOfNovember) + 3 * kDayMs;
  Principal p = Key("key_a", KeyLimits{0, 0, 50, 0});
  ASSERT_TRUE((*meter_->Begin(p, &retry_))->Finish(30, 30).ok());
  now_ms_ += kDayMs;
  auto refused = meter_->Begin(p, &retry_);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("tokens per month"), std::string::npos);
  EXPECT_EQ(retry_, (NextUtcMonthStartMs(now_ms_) - now_ms_) / 1000);
}

TEST_F(UsageMeterTest, UsageSurvivesANewMeterOnTheSameDatabase) {
  ASSERT_TRUE((*meter_->Begin(Key("key_a", {}), &retry_))->Finish(7, 5).ok());
  UsageMeter restarted(store_.get(), 0, [this] { return now_ms_; });
  EXPECT_EQ(restarted.Usage("key_a")->day.tokens(), 12);
}

}  // namespace
}  // namespace kimi::auth
