#include "text/piece_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace kimi::text {
namespace {

TEST(PieceCache, ReturnsWhatWasInsertedAndNothingElse) {
  PieceCache cache;
  std::vector<int32_t> ids = {7};
  EXPECT_FALSE(cache.AppendCached("req_6e785f957e", &ids));
  EXPECT_EQ(ids, std::vector<int32_t>({7}));
  const std::vector<int32_t> encoded = {101, 202, 303};
  cache.Insert("req_6e785f957e", encoded);
  EXPECT_TRUE(cache.AppendCached("req_6e785f957e", &ids));
  EXPECT_EQ(ids, std::vector<int32_t>({7, 101, 202, 303}));
}

// Many threads each encoding unique pieces (a request id per request) fill one bounded cache,
// not a cache each.
TEST(PieceCache, StaysWithinItsBoundWhateverTheNumberOfThreads) {
  PieceCache cache;
  constexpr int kThreads = 16;
  constexpr int kPiecesPerThread = 20'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cache, t] {
      std::vector<int32_t> ids;
      for (int i = 0; i < kPiecesPerThread; ++i) {
        const std::string piece = "req_" + std::to_string(t) + "_" + std::to_string(i);
        const std::vector<int32_t> encoded = {t, i};
        ids.clear();
        if (!cache.AppendCached(piece, &ids)) cache.Insert(piece, encoded);
        ids.clear();
        // Just inserted: another thread's insert into a full shard may have emptied it since, so
        // a miss is allowed; a hit must give back the right ids.
        if (cache.AppendCached(piece, &ids)) {
          EXPECT_EQ(ids, encoded);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.size(), PieceCache::kShards * PieceCache::kEntriesPerShard);
  EXPECT_GT(cache.size(), 0u);
}

}  // namespace
}  // namespace kimi::text
