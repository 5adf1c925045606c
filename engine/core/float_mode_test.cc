#include "core/float_mode.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cfloat>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace kimi {
namespace {

// Read through volatile so the compiler folds nothing: the arithmetic happens at run time,
// under the thread's mode.
volatile float g_smallest_normal = FLT_MIN;
volatile float g_subnormal = FLT_MIN / 8.0f;

// A product whose exact result is subnormal, and a subnormal read as an input.
float SubnormalProduct() { return g_smallest_normal * 0.25f; }
float SubnormalInputTimesOne() { return g_subnormal * 1.0f; }

#define SKIP_UNLESS_CONTROLLABLE()                                                          \
  if (!SubnormalsControllable()) GTEST_SKIP() << "this architecture has no flush-to-zero " \
                                                 "control the engine sets (x86-64, AArch64 only)"

TEST(FloatModeTest, FlushToZeroFlushesResultsAndInputs) {
  SKIP_UNLESS_CONTROLLABLE();
  const ScopedSubnormals keep(Subnormals::kKeep);
  EXPECT_GT(SubnormalProduct(), 0.0f);
  EXPECT_GT(SubnormalInputTimesOne(), 0.0f);
  {
    const ScopedSubnormals flush(Subnormals::kFlushToZero);
    EXPECT_EQ(ThreadSubnormals(), Subnormals::kFlushToZero);
    EXPECT_EQ(SubnormalProduct(), 0.0f);
    EXPECT_EQ(SubnormalInputTimesOne(), 0.0f);
  }
  EXPECT_EQ(ThreadSubnormals(), Subnormals::kKeep);
  EXPECT_GT(SubnormalProduct(), 0.0f);
}

// Every range of a pool, on the caller and on each worker, runs flushed; the caller has its
// own mode back afterwards.
TEST(FloatModeTest, EveryPoolThreadRunsFlushedAndTheCallerGetsItsModeBack) {
  SKIP_UNLESS_CONTROLLABLE();
  const ScopedSubnormals keep(Subnormals::kKeep);
  for (int threads : {1, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.subnormals(), Subnormals::kFlushToZero);
    std::vector<std::atomic<int>> flushed(threads), ranges(threads);
    std::vector<float> products(threads, -1.0f);
    pool.ParallelFor(0, threads, 1, [&](int64_t, int64_t, int t) {
      ranges[t]++;
      if (ThreadSubnormals() == Subnormals::kFlushToZero) flushed[t]++;
      products[t] = SubnormalProduct();
    });
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(ranges[t].load(), 1) << "thread " << t;
      EXPECT_EQ(flushed[t].load(), 1) << "thread " << t << " of " << threads << " ran without flush-to-zero";
      EXPECT_EQ(products[t], 0.0f) << "thread " << t;
    }
    EXPECT_EQ(ThreadSubnormals(), Subnormals::kKeep) << "the caller's mode was not restored";
  }
}

TEST(FloatModeTest, APoolBuiltToKeepSubnormalsKeepsThem) {
  SKIP_UNLESS_CONTROLLABLE();
  const ScopedSubnormals flush(Subnormals::kFlushToZero);
  ThreadPool pool(3, ThreadPool::DefaultSpin(), Subnormals::kKeep);
  std::vector<float> products(3, 0.0f);
  pool.ParallelFor(0, 3, 1, [&](int64_t, int64_t, int t) { products[t] = SubnormalProduct(); });
  // Compared as bits: this thread reads subnormals as zero.
  for (int t = 0; t < 3; ++t) EXPECT_NE(std::bit_cast<uint32_t>(products[t]), 0u) << "thread " << t;
  EXPECT_EQ(ThreadSubnormals(), Subnormals::kFlushToZero);
}

}  // namespace
}  // namespace kimi
