#include "router/circuit_breaker.h"

#include <gtest/gtest.h>

namespace kimi::router {
namespace {

TEST(CircuitBreaker, OpensAfterConsecutiveFailuresOnly) {
  CircuitBreaker b(3, 1000);
  ASSERT_TRUE(b.TryAcquire(0));
  b.RecordFailure(0);
  ASSERT_TRUE(b.TryAcquire(0));
  b.RecordFailure(0);
  ASSERT_TRUE(b.TryAcquire(0));
  b.RecordSuccess();  // the run is broken
  EXPECT_EQ(b.consecutive_failures(), 0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(b.TryAcquire(0));
    EXPECT_FALSE(b.RecordFailure(0));
  }
  ASSERT_TRUE(b.TryAcquire(0));
  EXPECT_TRUE(b.RecordFailure(10));
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_FALSE(b.TryAcquire(500));
  EXPECT_FALSE(b.WouldAdmit(1009));
}

TEST(CircuitBreaker, HalfOpenAdmitsOneProbe) {
  CircuitBreaker b(1, 1000);
  ASSERT_TRUE(b.TryAcquire(0));
  b.RecordFailure(0);
  EXPECT_TRUE(b.WouldAdmit(1000));
  ASSERT_TRUE(b.TryAcquire(1000));
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  EXPECT_FALSE(b.TryAcquire(1001)) << "a second request while the probe runs";
  EXPECT_FALSE(b.WouldAdmit(1001));
  b.Release();  // the probe's client went away: no verdict, the slot is free again
  ASSERT_TRUE(b.TryAcquire(1002));
  EXPECT_TRUE(b.RecordFailure(1002));  // the probe failed: open again, a new cool-down
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_FALSE(b.TryAcquire(1500));
  ASSERT_TRUE(b.TryAcquire(2002));
  b.RecordSuccess();
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_TRUE(b.TryAcquire(2003));
  EXPECT_TRUE(b.TryAcquire(2003));
}

}  // namespace
}  // namespace kimi::router
