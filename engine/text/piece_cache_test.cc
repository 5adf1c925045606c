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
  EXPECT_LE(cache.bytes(), PieceCache::kShards * PieceCache::kBytesPerShard);
  EXPECT_GT(cache.size(), 0u);
}

// Long pieces (a run of letters or Han characters is one piece, up to 25,000 characters) are
// bounded by their bytes: 16,384 entries of 25,000 Han characters (75 KB) and their ids could
// hold about 2.9 GB.
TEST(PieceCache, LongPiecesStayWithinItsBytes) {
  PieceCache cache;
  const size_t bound = PieceCache::kShards * PieceCache::kBytesPerShard;
  for (int i = 0; i < 4000; ++i) {
    const std::string piece = std::to_string(i) + std::string(10000 + size_t(i % 7) * 1000, 'x');
    cache.Insert(piece, std::vector<int32_t>(piece.size() / 8, i));
    ASSERT_LE(cache.bytes(), bound);
  }
  EXPECT_GT(cache.size(), 0u);
  // A piece larger than a sixteenth of a shard is not kept at all.
  const std::string huge(PieceCache::kBytesPerShard / 8, 'y');
  cache.Insert(huge, std::vector<int32_t>(10, 1));
  std::vector<int32_t> ids;
  EXPECT_FALSE(cache.AppendCached(huge, &ids));
}

}  // namespace
}  // namespace kimi::text
