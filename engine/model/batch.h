// What one forward pass runs: the rows of several sequences, concatenated. Only the sequence
// mixers (KDA, MLA) look across rows, and only within a segment; everything else treats the
// rows as independent tokens, so a weight is streamed once for all of them.
//
// Thread safety: plain values, used by the one thread running the pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

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

// Grows `buffer` to at least `n` floats; scratch is reallocated only when a pass is larger than
// every pass before it.
inline float* Reserve(std::vector<float>& buffer, int64_t n) {
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace kimi::model
