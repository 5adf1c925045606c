// The rank table of a byte-level BPE vocabulary: byte string <-> rank, loaded from (and
// written to) tiktoken's format, one "base64(bytes) rank" line per token.
//
// Ranks are the token ids of the ordinary (non-special) tokens and also the merge priority:
// a lower rank merges first. The table requires every single byte to have a rank (so any
// text can be encoded) and the ranks to be exactly 0..size()-1 (special tokens follow them).
//
// Lookup is an open-addressing hash table over one arena of bytes, so a lookup of a slice of
// a piece allocates nothing. A slot holds a token's first 8 bytes, so a lookup of a token
// that short (most are) reads its slot and nothing else.
//
// Thread safety: immutable after construction; any number of threads may read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::text {

class RankTable {
 public:
  static constexpr int32_t kAbsent = -1;
  // The longest token the table holds (a slot records the length in 16 bits).
  static constexpr size_t kMaxTokenBytes = 65535;

  // Parses tiktoken text: non-empty lines of "base64 rank" separated by whitespace.
  static Result<RankTable> ParseTiktoken(std::string_view text);
  // tokens[r] is the byte string of rank r.
  static Result<RankTable> FromTokens(std::vector<std::string> tokens);

  // The rank of bytes, or kAbsent.
  int32_t Find(std::string_view bytes) const;
  // Precondition: 0 <= rank < size().
  std::string_view Bytes(int32_t rank) const {
    return std::string_view(arena_).substr(offsets_[rank], offsets_[rank + 1] - offsets_[rank]);
  }
  int32_t ByteRank(uint8_t byte) const { return byte_rank_[byte]; }
  // The rank of the two bytes a b, or kAbsent; a table lookup (every BPE starts with these).
  int32_t TwoByteRank(uint8_t a, uint8_t b) const { return two_byte_rank_[(a << 8) | b]; }
  int32_t size() const { return static_cast<int32_t>(offsets_.size()) - 1; }

  // The table in tiktoken format, ranks ascending (ParseTiktoken's inverse).
  std::string ToTiktoken() const;

 private:
  RankTable() = default;
  Status Build();

  std::string arena_;              // every token's bytes, in rank order
  std::vector<uint32_t> offsets_;  // size()+1 entries into arena_
  // One slot holds what a probe needs: tokens of up to 8 bytes are compared in the slot; a
  // longer one's remaining bytes are at arena_[offsets_[rank] + 8].
  struct Slot {
    uint64_t head;    // the first 8 bytes as a little-endian word, zero-padded
    int32_t rank;     // kAbsent marks an empty slot
    uint16_t tag;     // the hash's top 16 bits
    uint16_t length;
  };
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  int32_t byte_rank_[256] = {};
  std::vector<int32_t> two_byte_rank_;  // 65,536 entries
};

// Base64 (RFC 4648, with padding) as tiktoken files use it.
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace kimi::text
