#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace kimi {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(0, n, 1, [&](int64_t b, int64_t e, int t) {
        EXPECT_GE(t, 0);
        EXPECT_LT(t, threads);
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ThreadPoolTest, RangesStartOnAlignedBounds) {
  ThreadPool pool(3);
  std::atomic<int> ranges{0};
  pool.ParallelFor(10, 10 + 100, 16, [&](int64_t b, int64_t e, int) {
    EXPECT_EQ((b - 10) % 16, 0);
    EXPECT_LE(e, 110);
    ranges++;
  });
  EXPECT_GE(ranges.load(), 2);
}

TEST(ThreadPoolTest, ManyConsecutiveCallsFromSeveralCallers) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  auto caller = [&] {
    for (int rep = 0; rep < 200; ++rep)
      pool.ParallelFor(0, 10, 1, [&](int64_t b, int64_t e, int) { sum += e - b; });
  };
  std::thread other(caller);
  caller();
  other.join();
  EXPECT_EQ(sum.load(), 2 * 200 * 10);
}

}  // namespace
}  // namespace kimi
