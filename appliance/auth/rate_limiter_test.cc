#include "auth/rate_limiter.h"

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

TEST(RateLimiterTest, BurstUpToTheLimitThenRefusedWithRetryAfter) {
  RateLimiter limiter;
  int64_t retry = 0;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("k", 3, 1000, &retry).ok()) << i;
  Status refused = limiter.Admit("k", 3, 1000, &retry);
  EXPECT_EQ(refused.code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(retry, 20);  // one token per 20 s at 3 per minute
  // Other keys have their own buckets.
  EXPECT_TRUE(limiter.Admit("other", 3, 1000, &retry).ok());
}

TEST(RateLimiterTest, TokensComeBackAtTheConfiguredRate) {
  RateLimiter limiter;
  int64_t retry = 0;
  ASSERT_TRUE(limiter.Admit("k", 60, 0, &retry).ok());
  for (int i = 1; i < 60; ++i) ASSERT_TRUE(limiter.Admit("k", 60, 0, &retry).ok());
  EXPECT_FALSE(limiter.Admit("k", 60, 999, &retry).ok());
  EXPECT_EQ(retry, 1);
  EXPECT_TRUE(limiter.Admit("k", 60, 1000, &retry).ok());
  EXPECT_FALSE(limiter.Admit("k", 60, 1000, &retry).ok());
}

TEST(RateLimiterTest, NoLimitMeansNoRefusal) {
  RateLimiter limiter;
  int64_t retry = 0;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Admit("k", 0, 0, &retry).ok());
}

TEST(RateLimiterTest, ChargedTokensGoIntoDebtThatDelaysTheNextRequest) {
  RateLimiter limiter;
  int64_t retry = 0;
  ASSERT_TRUE(limiter.HasOne("k", 600, 0, &retry));  // 10 a second
  limiter.Charge("k", 600, 700, 0);                  // 100 over the bucket's 600
  EXPECT_FALSE(limiter.HasOne("k", 600, 0, &retry));
  EXPECT_EQ(retry, 11);  // 101 tokens at 10 a second, rounded up
  EXPECT_FALSE(limiter.HasOne("k", 600, 10'000, &retry));
  EXPECT_TRUE(limiter.HasOne("k", 600, 10'100, &retry));
  // Looking spends nothing; charging without a limit does nothing.
  EXPECT_TRUE(limiter.HasOne("k", 600, 10'100, &retry));
  limiter.Charge("free", 0, 1'000'000, 0);
  EXPECT_TRUE(limiter.Snapshot().count("free") == 0);
}

}  // namespace
}  // namespace kimi::auth
