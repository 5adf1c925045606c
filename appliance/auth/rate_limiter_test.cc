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

}  // namespace
}  // namespace kimi::auth
