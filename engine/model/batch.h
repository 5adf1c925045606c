// What one forward pass runs: the rows of several sequences, concatenated. Only the sequence
// mixers (KDA, MLA) look across rows, and only within a segment; everything else treats the
// rows as independent tokens, so a weight is streamed once for all of them.
//
// Thread safety: plain values, used by the one thread running the pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kimi/model.h"

namespace kimi::model {

// Rows [begin, begin + count) are the next `count` tokens of `state`, which has consumed `past`.
struct Segment {
  SequenceState* state;
  int64_t begin;
  int64_t count;
  int64_t past;
};

using Segments = std::span<const Segment>;

// Runs each(segment, pool) for every segment of a sequence mixer's per-sequence step. A run of
// tokens (prefill) gets the pool, so its kernel splits the heads over the threads. Single-token
// segments (decodes) share one parallel region when there are at least as many of them as
// threads, each thread running whole sequences with no pool: one region per layer instead of one
// per sequence. A sequence's result is the same either way; only the split of work differs.
template <typename Fn>
void ForEachSegment(Segments segments, ThreadPool* pool, Fn&& each) {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  std::vector<int32_t> single;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].count == 1) single.push_back(static_cast<int32_t>(i));
  }
  const bool together = threads > 1 && static_cast<int64_t>(single.size()) >= threads;
  for (const Segment& seg : segments) {
    if (!together || seg.count != 1) each(seg, pool);
  }
  if (!together) return;
  pool->ParallelFor(0, static_cast<int64_t>(single.size()), 1, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) each(segments[size_t(single[size_t(i)])], nullptr);
  });
}

// Grows `buffer` to at least `n` floats; scratch is reallocated only when a pass is larger than
// every pass before it.
inline float* Reserve(std::vector<float>& buffer, int64_t n) {
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace kimi::model
