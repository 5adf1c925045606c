// Byte-level BPE by rank, tiktoken's rule: start from single bytes, and repeatedly merge the
// adjacent pair whose concatenation has the lowest rank (the leftmost such pair on a tie)
// until no adjacent pair is in the table. The tokens are the ranks of the final parts.
//
// Two implementations of the one rule: a quadratic scan that is fastest for the short pieces
// the pre-tokeniser produces, and a heap over a linked list for long pieces (runs of the
// same character, minified code). BytePairEncode picks by length; tests check they agree.
//
// Thread safety: pure functions over a read-only RankTable.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/tokenizer_ranks.h"

namespace kimi::text {

// Appends the token ids of piece to out. Precondition: !piece.empty().
void BytePairEncode(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out);

void BytePairEncodeQuadratic(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out);
void BytePairEncodeHeap(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out);

}  // namespace kimi::text
