// PagePool and PrefixCache on hand-made states (no model): hits need the exact tokens and a KDA
// snapshot, leave one prompt token to run, share pages by reference count, and eviction takes
// the least recently used tail entries that no sequence reads.
#include "runtime/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>

namespace kimi::runtime {
namespace {

constexpr int64_t kPageTokens = 4;
constexpr uint64_t kScope = 7;

SequenceState Probe() {
  SequenceState s;
  for (int i = 0; i < 2; ++i) {
    MlaLatentCache cache;
    cache.page_tokens = kPageTokens;
    cache.row_width = 3;
    s.mla.push_back(cache);
  }
  KdaLayerState kda;
  kda.recurrent.assign(8, 0.0f);
  kda.conv.assign(4, 0.0f);
  s.kda.push_back(kda);
  return s;
}

// A state of `pool` that has consumed `tokens` tokens (pages allocated, KDA state marked).
SequenceState Consumed(PagePool& pool, int64_t tokens, float mark) {
  SequenceState s = Probe();
  pool.Attach(s);
  for (int64_t p = 0; p < (tokens + kPageTokens - 1) / kPageTokens; ++p) PagePool::Append(s, *pool.Allocate());
  s.length = tokens;
  s.kda[0].recurrent.assign(8, mark);
  return s;
}

std::vector<int32_t> Iota(int n, int32_t first) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// A prefix cached under one scope is no hit under another (a caller would read another's prompt
// from its time to first token), nor is a hash chain of one scope continued by another's; the
// same tokens cached under two scopes are two entries.
TEST(PrefixCacheTest, APrefixIsFoundOnlyByRequestsOfItsOwnScope) {
  PagePool pool(Probe(), 16);
  PrefixCache cache(pool);
  const auto prompt = Iota(12, 100);
  SequenceState a = Consumed(pool, 8, 1.5f);
  ASSERT_EQ(cache.Insert(kScope, prompt, 8, a, /*snapshot=*/true), 2);
  for (uint64_t other : {uint64_t{0}, kScope + 1, ~kScope}) EXPECT_EQ(cache.Lookup(other, prompt).tokens, 0) << other;
  PrefixHit own = cache.Lookup(kScope, prompt);
  EXPECT_EQ(own.tokens, 8);
  for (int32_t p : own.pages) pool.Release(p);

  SequenceState b = Consumed(pool, 8, 2.5f);
  EXPECT_EQ(cache.Insert(kScope + 1, prompt, 8, b, /*snapshot=*/true), 2);  // its own copy
  PrefixHit theirs = cache.Lookup(kScope + 1, prompt);
  ASSERT_TRUE(theirs.kda);
  EXPECT_EQ((*theirs.kda)[0].recurrent[0], 2.5f);
  EXPECT_EQ(theirs.pages, b.mla[0].block_table);
  for (int32_t p : theirs.pages) pool.Release(p);
  pool.ReleaseAll(a);
  pool.ReleaseAll(b);
}

TEST(PrefixCacheTest, HitNeedsTheSameTokensASnapshotAndOneTokenLeft) {
  PagePool pool(Probe(), 16);
  PrefixCache cache(pool);
  const auto prompt = Iota(12, 100);
  EXPECT_EQ(cache.Lookup(kScope, prompt).tokens, 0);

  SequenceState a = Consumed(pool, 8, 1.5f);
  EXPECT_EQ(cache.Insert(kScope, prompt, 8, a, /*snapshot=*/true), 2);
  EXPECT_EQ(cache.stats().pages, 2);
  EXPECT_EQ(cache.stats().snapshots, 1);
  EXPECT_EQ(pool.RefCount(a.mla[0].block_table[0]), 2);  // the sequence's and the cache's

  PrefixHit hit = cache.Lookup(kScope, prompt);
  EXPECT_EQ(hit.tokens, 8);
  EXPECT_EQ(hit.pages, a.mla[0].block_table);
  ASSERT_TRUE(hit.kda);
  EXPECT_EQ((*hit.kda)[0].recurrent[0], 1.5f);
  EXPECT_EQ(pool.RefCount(hit.pages[1]), 3);
  for (int32_t p : hit.pages) pool.Release(p);

  // Exactly 8 tokens: the snapshot at 8 would leave nothing to run.
  EXPECT_EQ(cache.Lookup(kScope, Iota(8, 100)).tokens, 0);
  // A different token inside the second page: only the first page matches, with no snapshot.
  auto other = prompt;
  other[5] = 7;
  EXPECT_EQ(cache.Lookup(kScope, other).tokens, 0);
  // The same tokens in another position of the chain do not match.
  EXPECT_EQ(cache.Lookup(kScope, Iota(12, 104)).tokens, 0);
  pool.ReleaseAll(a);
  EXPECT_EQ(pool.in_use(), 2);  // the cache's pages
}

TEST(PrefixCacheTest, EvictsLeastRecentlyUsedTailsThatNoSequenceReads) {
  PagePool pool(Probe(), 16);
  PrefixCache cache(pool);
  const auto p1 = Iota(9, 0), p2 = Iota(9, 50);
  SequenceState a = Consumed(pool, 8, 1.0f), b = Consumed(pool, 8, 2.0f);
  cache.Insert(kScope, p1, 4, a, true);
  cache.Insert(kScope, p1, 8, a, true);
  cache.Insert(kScope, p2, 8, b, true);
  pool.ReleaseAll(b);
  const uint64_t full = cache.bytes();
  EXPECT_EQ(cache.stats().pages, 4);
  EXPECT_EQ(cache.stats().snapshots, 3);

  // p1's pages are still read by `a`: only p2's chain can go, tail first.
  EXPECT_FALSE(cache.EvictTo(0));
  EXPECT_EQ(cache.stats().evictions, 2);
  EXPECT_EQ(cache.stats().pages, 2);
  EXPECT_LT(cache.bytes(), full);
  EXPECT_EQ(cache.Lookup(kScope, p2).tokens, 0);
  PrefixHit hit = cache.Lookup(kScope, p1);
  EXPECT_EQ(hit.tokens, 8);
  for (int32_t p : hit.pages) pool.Release(p);

  pool.ReleaseAll(a);
  EXPECT_TRUE(cache.EvictTo(0));
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(pool.in_use(), 0);
}

TEST(PagePoolTest, AllocatesUpToCapacityAndReusesReleasedPages) {
  PagePool pool(Probe(), 2);
  EXPECT_EQ(pool.page_bytes(), 2 * (kPageTokens * 3 * sizeof(float) + sizeof(int32_t)));
  const auto p = pool.Allocate(), q = pool.Allocate();
  ASSERT_TRUE(p && q);
  EXPECT_FALSE(pool.Allocate());
  pool.Retain(*p);
  pool.Release(*p);
  EXPECT_FALSE(pool.Allocate());
  pool.Release(*p);
  EXPECT_EQ(pool.Allocate(), p);
  EXPECT_EQ(pool.in_use(), 2);
}

}  // namespace
}  // namespace kimi::runtime
