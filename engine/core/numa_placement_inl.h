// ParallelForByNode's body (a template, so it lives in a header); see numa_placement.h.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

namespace kimi {

template <typename GroupOf, typename Fn>
void ParallelForByNode(ThreadPool* pool, const NumaPlan* plan, int64_t n, GroupOf&& group_of, Fn&& fn) {
  if (pool == nullptr) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  if (plan == nullptr || !plan->active()) {
    pool->ParallelForChunks(0, n, 1, [&](int64_t b, int64_t e, int t) {
      for (int64_t i = b; i < e; ++i) fn(i, t);
    });
    return;
  }
  // The items of each group in order, and per group a cursor that its threads (and, once their
  // own are done, the other groups' threads) advance.
  const size_t groups = plan->groups.size();
  std::vector<std::vector<int64_t>> items(groups);
  for (int64_t i = 0; i < n; ++i) items[size_t(group_of(i))].push_back(i);
  std::unique_ptr<std::atomic<size_t>[]> next(new std::atomic<size_t>[groups]);
  for (size_t g = 0; g < groups; ++g) next[g].store(0);
  // One range per thread: ParallelFor's static split of [0, threads) gives thread t the range
  // [t, t + 1).
  pool->ParallelFor(0, pool->num_threads(), 1, [&](int64_t, int64_t, int t) {
    const size_t own = size_t(plan->GroupOfThread(t));
    for (size_t k = 0; k < groups; ++k) {
      const size_t g = (own + k) % groups;
      for (size_t j; (j = next[g].fetch_add(1)) < items[g].size();) fn(items[g][j], t);
    }
  });
}

}  // namespace kimi
