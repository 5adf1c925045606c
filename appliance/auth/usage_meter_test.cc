#include "auth/usage_meter.h"

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "auth/test_auth_store.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDayMs = 86'400'000;
// 2026-11-30T23:59:00Z: one minute before a day and a month end.
constexpr int64_t kLastMinuteOfNovember = 1'796'083'140'000;

class UsageMeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_store_.status().ok()) << test_store_.status().ToString();
    store_ = test_store_.store();
    meter_ = std::make_unique<UsageMeter>(store_, 3, [this] { return now_ms_; });
  }
  void TearDown() override { meter_.reset(); }

  static Principal Key(const std::string& id, KeyLimits limits) {
    Principal p;
    p.kind = Principal::Kind::kApiKey;
    p.id = id;
    p.limits = limits;
    return p;
  }

  TestAuthStore test_store_;
  AuthStore* store_ = nullptr;
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

TEST_F(UsageMeterTest, ALeaseRecordsWhatWasCountedWhenItEndsWithoutFinish) {
  {
    auto lease = meter_->Begin(Key("key_a", {}), &retry_);
    ASSERT_TRUE(lease.ok());
    (*lease)->Count(40, 1);
    (*lease)->Count(40, 3);  // the counts so far replace the earlier ones
  }  // cut short: no Finish()
  {
    auto never_counted = meter_->Begin(Key("key_a", {}), &retry_);  // failed before any event
    ASSERT_TRUE(never_counted.ok());
  }
  Result<KeyUsage> usage = meter_->Usage("key_a");
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->day.requests, 1);
  EXPECT_EQ(usage->day.prompt_tokens, 40);
  EXPECT_EQ(usage->day.completion_tokens, 3);
  EXPECT_EQ(meter_->InFlight(), 0);
}

TEST_F(UsageMeterTest, TokensPerMinuteRefusesUntilTheBucketRefills) {
  Principal p = Key("key_a", KeyLimits{0, 0, 0, 0, 120});  // two tokens a second
  ASSERT_TRUE((*meter_->Begin(p, &retry_))->Finish(100, 30).ok());  // 10 over the bucket
  auto refused = meter_->Begin(p, &retry_);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("tokens per minute"), std::string::npos);
  EXPECT_EQ(retry_, 6);  // 11 tokens at two a second
  now_ms_ += 5'500;
  EXPECT_TRUE(meter_->Begin(p, &retry_).ok());
  EXPECT_TRUE(meter_->Begin(Key("key_b", KeyLimits{0, 0, 0, 0, 120}), &retry_).ok());  // its own bucket
}

// Requests admitted at once each saw the same usage below the quota: a burst of them took many
// times it. Each request in flight now holds the most it may use until its counts are in.
TEST_F(UsageMeterTest, RequestsInFlightHoldTheMostTheyMayUseAgainstTheDailyQuota) {
  Principal p = Key("key_a", KeyLimits{0, 100, 0, 0});
  auto first = meter_->Begin(p, &retry_, 60);
  auto second = meter_->Begin(p, &retry_, 60);  // 60 held, below the quota: may cross it, as one request may
  ASSERT_TRUE(first.ok() && second.ok());
  auto refused = meter_->Begin(p, &retry_, 60);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("up to 120 more held by its requests in flight"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(retry_, 1);  // free again as they end, not at midnight
  ASSERT_TRUE((*first)->Finish(10, 5).ok());  // its counts replace what it held
  auto third = meter_->Begin(p, &retry_, 60);  // 15 used + 60 held
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  second->reset();
  third->reset();
  first->reset();
  EXPECT_EQ(meter_->InFlight("key_a"), 0);
  EXPECT_TRUE(meter_->Begin(p, &retry_, 84).ok());  // 15 used: nothing held any more
}

TEST_F(UsageMeterTest, RequestsInFlightHoldTheMostTheyMayUseAgainstTheMinuteBucket) {
  Principal p = Key("key_a", KeyLimits{0, 0, 0, 0, 120});
  auto first = meter_->Begin(p, &retry_, 200);
  ASSERT_TRUE(first.ok());
  auto refused = meter_->Begin(p, &retry_, 10);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("tokens per minute"), std::string::npos);
  EXPECT_EQ(retry_, 1);
  ASSERT_TRUE((*first)->Finish(20, 10).ok());  // 90 left in the bucket, nothing held
  EXPECT_TRUE(meter_->Begin(p, &retry_, 10).ok());
  EXPECT_TRUE(meter_->Begin(Key("key_b", KeyLimits{0, 0, 0, 0, 120}), &retry_, 200).ok());  // its own
}

// Many requests of one key admitted from many threads at once: what they hold keeps the
// admitted ones within the quota's reach (100 tokens, 40 each: at most three admitted).
TEST_F(UsageMeterTest, ABurstOfRequestsAtOnceIsAdmittedOnlyAsFarAsTheQuotaReaches) {
  UsageMeter meter(store_, 0, [this] { return now_ms_; });
  Principal p = Key("key_a", KeyLimits{0, 100, 0, 0});
  std::mutex mu;
  std::vector<std::unique_ptr<UsageMeter::Lease>> admitted;
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      int64_t retry = 0;
      Result<std::unique_ptr<UsageMeter::Lease>> lease = meter.Begin(p, &retry, 40);
      if (!lease.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      admitted.push_back(std::move(lease).value());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(admitted.size(), 3u);
  admitted.clear();
  ASSERT_TRUE(meter.Close().ok());
}

TEST_F(UsageMeterTest, UsageSurvivesANewMeterOnTheSameDatabase) {
  ASSERT_TRUE((*meter_->Begin(Key("key_a", {}), &retry_))->Finish(7, 5).ok());
  ASSERT_TRUE(meter_->Close().ok());  // the clean shutdown writes what is left
  UsageMeter restarted(store_, 0, [this] { return now_ms_; });
  EXPECT_EQ(restarted.Usage("key_a")->day.tokens(), 12);
}

TEST_F(UsageMeterTest, QuotasCountEveryFinishedRequestBeforeItsRowIsWritten) {
  UsageMeter meter(store_, 0, [this] { return now_ms_; }, /*usage_flush_ms=*/3'600'000);
  Principal p = Key("key_a", KeyLimits{0, 100, 0, 0});
  for (int i = 0; i < 9; ++i) ASSERT_TRUE((*meter.Begin(p, &retry_))->Finish(10, 1).ok());  // 99 tokens
  ASSERT_TRUE((*meter.Begin(p, &retry_))->Finish(1, 0).ok());  // reaches 100: served
  EXPECT_EQ(meter.Begin(p, &retry_).status().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(store_->ReadUsage("key_a", UtcDayStartMs(now_ms_), UtcMonthStartMs(now_ms_))->day.requests, 0);
  EXPECT_EQ(meter.UsageStats().transactions, 0u);
  ASSERT_TRUE(meter.Close().ok());
  EXPECT_EQ(meter.UsageStats().transactions, 1u);
  KeyUsage stored = *store_->ReadUsage("key_a", UtcDayStartMs(now_ms_), UtcMonthStartMs(now_ms_));
  EXPECT_EQ(stored.day.requests, 10);
  EXPECT_EQ(stored.day.tokens(), 100);
}

}  // namespace
}  // namespace kimi::auth
