#include "core/machine_limits.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/thread_pool.h"

namespace kimi {
namespace {

// Only sanity: the figures are positive and finite (their size is the benchmark's business).
TEST(MachineLimitsTest, BandwidthIsPositive) {
  ThreadPool pool(2);
  BandwidthResult r = MeasureMemoryReadBandwidth(&pool, size_t{16} << 20, 1);
  EXPECT_GT(r.gbytes_per_s, 0.0);
  EXPECT_TRUE(std::isfinite(r.gbytes_per_s));
  EXPECT_GT(r.gbytes_per_cpu_s, 0.0);
  EXPECT_EQ(r.bytes, size_t{16} << 20);
  EXPECT_EQ(r.threads, 2);
}

TEST(MachineLimitsTest, FmaPeakIsPositive) {
  FmaPeakResult r = MeasureFmaPeak(nullptr, 0.02);
  EXPECT_GT(r.gflops, 0.0);
  EXPECT_TRUE(std::isfinite(r.gflops));
  EXPECT_GT(r.gflops_per_cpu_s, 0.0);
  EXPECT_EQ(r.threads, 1);
}

}  // namespace
}  // namespace kimi
