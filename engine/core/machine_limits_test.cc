#include "core/machine_limits.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/thread_pool.h"
#if defined(__x86_64__)
#include "core/cpu_features.h"
#endif

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

#if defined(__x86_64__)
void ExpectPeakIsPositive(const FmaPeakResult& r, const char* isa) {
  EXPECT_GT(r.gflops, 0.0);
  EXPECT_TRUE(std::isfinite(r.gflops));
  EXPECT_GT(r.gflops_per_cpu_s, 0.0);
  EXPECT_EQ(r.threads, 1);
  EXPECT_STREQ(r.isa, isa);
}

TEST(MachineLimitsTest, Bf16DotPeakIsPositive) {
  if (!cpu::HasAvx512Bf16()) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  ExpectPeakIsPositive(MeasureBf16DotPeak(nullptr, 0.02), "avx512bf16-vdpbf16ps");
}

TEST(MachineLimitsTest, AmxBf16PeakIsPositive) {
  if (!cpu::HasAmxBf16()) {
    GTEST_SKIP() << "this CPU has no AMX-BF16 (tdpbf16ps), or the OS refused the tile data permission";
  }
  ExpectPeakIsPositive(MeasureAmxBf16Peak(nullptr, 0.02), "amx-tdpbf16ps");
}
#endif

}  // namespace
}  // namespace kimi
