#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
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

// Every spin setting: 0 (sleep at once), a bound too short to bridge the gaps between calls
// in these tests (so both sleeping paths run), and one long enough that they rarely sleep.
const std::chrono::microseconds kSpins[] = {std::chrono::microseconds(0), std::chrono::microseconds(1),
                                            std::chrono::microseconds(300)};

TEST(ThreadPoolTest, NoWorkLostOverManyRegionsWhateverTheSpin) {
  for (auto spin : kSpins) {
    for (int threads : {2, 3}) {
      ThreadPool pool(threads, spin);
      EXPECT_EQ(pool.spin(), spin);
      std::vector<int64_t> per_index(257, 0);  // each index written by exactly one thread per call
      for (int rep = 0; rep < 600; ++rep) {
        const int64_t n = 1 + rep % 257;
        pool.ParallelFor(0, n, 1, [&](int64_t b, int64_t e, int) {
          for (int64_t i = b; i < e; ++i) per_index[i] += 1;
        });
      }
      for (int64_t i = 0; i < 257; ++i) {
        int64_t expected = 0;
        for (int rep = 0; rep < 600; ++rep) expected += (i < 1 + rep % 257) ? 1 : 0;
        EXPECT_EQ(per_index[i], expected) << "spin=" << spin.count() << " threads=" << threads << " i=" << i;
      }
    }
  }
}

// The caller's range finishes long before a worker's, so the caller's wait outlasts a short
// spin and goes to sleep; the worker must wake it. Likewise the workers sleep between the
// calls, which are spaced further apart than the spin.
TEST(ThreadPoolTest, SleepingCallerAndWorkersAreWoken) {
  for (auto spin : kSpins) {
    ThreadPool pool(2, spin);
    std::atomic<int> worker_ranges{0};
    for (int rep = 0; rep < 20; ++rep) {
      pool.ParallelFor(0, 2, 1, [&](int64_t, int64_t, int t) {
        if (t == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          worker_ranges++;
        }
      });
      // ParallelFor returned, so the worker's range is complete.
      EXPECT_EQ(worker_ranges.load(), rep + 1) << "spin=" << spin.count();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

TEST(ThreadPoolTest, ResultsAreVisibleToTheCallerAfterReturn) {
  for (auto spin : kSpins) {
    ThreadPool pool(4, spin);
    std::vector<int64_t> out(4096);
    for (int rep = 0; rep < 300; ++rep) {
      pool.ParallelFor(0, 4096, 16, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) out[i] = i * rep;  // plain writes, published by the pool
      });
      int64_t bad = 0;
      for (int64_t i = 0; i < 4096; ++i) bad += out[i] != i * rep;
      ASSERT_EQ(bad, 0) << "spin=" << spin.count() << " rep=" << rep;
    }
  }
}

// Destroying a pool whose workers are spinning, sleeping, or were never used must return
// (the test would hang otherwise) and join every worker.
TEST(ThreadPoolTest, ShutsDownCleanlyFromEveryState) {
  for (auto spin : kSpins) {
    { ThreadPool never_used(3, spin); }
    {
      ThreadPool just_used(3, spin);  // workers still spinning when destroyed
      just_used.ParallelFor(0, 3, 1, [](int64_t, int64_t, int) {});
    }
    {
      ThreadPool idle(3, spin);  // workers asleep when destroyed
      idle.ParallelFor(0, 3, 1, [](int64_t, int64_t, int) {});
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  }
  for (int i = 0; i < 50; ++i) {
    auto pool = std::make_unique<ThreadPool>(2, std::chrono::microseconds(i % 3 == 0 ? 0 : 50));
    std::atomic<int> ran{0};
    pool->ParallelFor(0, 2, 1, [&](int64_t, int64_t, int) { ran++; });
    EXPECT_EQ(ran.load(), 2);
    pool.reset();
  }
}

TEST(ThreadPoolTest, ConcurrentCallersWithSpinningWorkers) {
  ThreadPool pool(3, std::chrono::microseconds(100));
  std::atomic<int64_t> sum{0};
  auto caller = [&] {
    for (int rep = 0; rep < 200; ++rep)
      pool.ParallelFor(0, 30, 1, [&](int64_t b, int64_t e, int) { sum += e - b; });
  };
  std::thread a(caller), b(caller);
  caller();
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 3 * 200 * 30);
}

TEST(ThreadPoolTest, ChunksCoverEveryIndexExactlyOnce) {
  for (auto spin : kSpins) {
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads, spin);
      for (int64_t n : {0, 1, 15, 16, 17, 100, 1000}) {
        for (int64_t chunk : {1, 16, 64, 5000}) {
          std::vector<std::atomic<int>> hits(n + 5);
          std::atomic<int> bad_bounds{0};
          pool.ParallelForChunks(5, 5 + n, chunk, [&](int64_t b, int64_t e, int t) {
            const bool whole = threads == 1 && b == 5 && e == 5 + n;  // one-thread pools: one call
            if (!whole && ((b - 5) % chunk != 0 || e > 5 + n || e - b > chunk)) bad_bounds++;
            if (e <= b || t < 0 || t >= threads) bad_bounds++;
            for (int64_t i = b; i < e; ++i) hits[i]++;
          });
          EXPECT_EQ(bad_bounds.load(), 0);
          for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(hits[i].load(), 0);
          for (int64_t i = 5; i < 5 + n; ++i)
            ASSERT_EQ(hits[i].load(), 1) << "spin=" << spin.count() << " threads=" << threads << " n=" << n
                                         << " chunk=" << chunk << " i=" << i;
        }
      }
    }
  }
}

// A thread that is held up leaves its chunks to the others: with one worker blocked until the
// caller has taken a chunk of its own and more, every chunk still runs exactly once.
TEST(ThreadPoolTest, ChunksGoToTheThreadsThatAreFree) {
  ThreadPool pool(2, std::chrono::microseconds(0));
  for (int rep = 0; rep < 20; ++rep) {
    std::atomic<int> caller_chunks{0}, worker_chunks{0};
    std::vector<std::atomic<int>> hits(64);
    pool.ParallelForChunks(0, 64, 4, [&](int64_t b, int64_t e, int t) {
      if (t == 0) caller_chunks++;
      if (t == 1) {
        // Hold the worker until the caller has run at least two chunks (it cannot finish the
        // region alone without the worker returning, so this cannot deadlock).
        while (caller_chunks.load() < 2) std::this_thread::yield();
        worker_chunks++;
      }
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    EXPECT_GE(caller_chunks.load(), 2);
    EXPECT_EQ(caller_chunks.load() + worker_chunks.load(), 16);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(hits[i].load(), 1);
  }
}

// The caller of a chunked region does not wait for a worker that joins after every chunk is
// taken (tiny regions make that common), and such a worker must still take part in the fixed
// ranges of the regions that follow and never run a region twice: chunked and fixed regions
// alternate, and every index is counted exactly once per region.
TEST(ThreadPoolTest, LateWorkersSkipClosedChunkedRegionsOnly) {
  for (auto spin : kSpins) {
    for (int threads : {2, 3}) {
      ThreadPool pool(threads, spin);
      std::vector<std::atomic<int>> hits(64);
      std::vector<std::atomic<int>> fixed_threads(threads);
      int64_t regions = 0;
      for (int rep = 0; rep < 400; ++rep) {
        const int64_t n = 2 + rep % 63;
        pool.ParallelForChunks(0, n, 1, [&](int64_t b, int64_t e, int) {
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        pool.ParallelFor(0, 64, 1, [&](int64_t b, int64_t e, int t) {
          fixed_threads[t]++;
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        regions++;
        for (int64_t i = 0; i < 64; ++i) {
          ASSERT_EQ(hits[i].exchange(0), i < n ? 2 : 1) << "spin=" << spin.count() << " threads=" << threads
                                                        << " rep=" << rep << " i=" << i;
        }
      }
      for (int t = 0; t < threads; ++t) EXPECT_EQ(fixed_threads[t].load(), regions) << "thread " << t;
    }
  }
}

}  // namespace
}  // namespace kimi
