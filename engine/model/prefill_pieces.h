// How a prompt is cut for prefill: pieces of at most `max_piece` tokens run one after another
// (the sequence's state carries between them), each asking for the logits rows the caller
// wants and saying where in the caller's logits buffer they land. One plan for the CPU
// (Model::Prefill) and GPU (gpu::GpuModel::Prefill) passes.
//
// Owns nothing. Thread safety: a pure function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kimi/model.h"

namespace kimi::model {

struct PrefillPiece {
  int64_t begin = 0;  // tokens [begin, begin + count) of the prompt
  int64_t count = 0;
  std::vector<int64_t> logit_rows;  // rows of this piece whose logits are wanted, ascending
  int64_t first_logits_row = 0;     // the caller's logits row where logit_rows[0] lands
};

// kAll: every row of every piece, landing at its token index (the buffer holds T rows);
// kLast: only the prompt's last token, from the last piece, landing at row 0 (one row).
// Precondition: T >= 1, max_piece >= 1.
inline std::vector<PrefillPiece> PlanPrefillPieces(int64_t T, int64_t max_piece, LogitsRows rows) {
  std::vector<PrefillPiece> pieces;
  for (int64_t begin = 0; begin < T; begin += max_piece) {
    PrefillPiece p;
    p.begin = begin;
    p.count = std::min(max_piece, T - begin);
    if (rows == LogitsRows::kAll) {
      for (int64_t j = 0; j < p.count; ++j) p.logit_rows.push_back(j);
      p.first_logits_row = begin;
    } else if (begin + p.count == T) {
      p.logit_rows.push_back(p.count - 1);
    }
    pieces.push_back(std::move(p));
  }
  return pieces;
}

}  // namespace kimi::model
