#include "text/tokenizer_bpe.h"

#include <limits>
#include <queue>

namespace kimi::text {
namespace {

constexpr int32_t kNoRank = std::numeric_limits<int32_t>::max();
constexpr size_t kHeapThreshold = 128;

int32_t RankOrNone(const RankTable& ranks, std::string_view bytes) {
  const int32_t r = ranks.Find(bytes);
  return r == RankTable::kAbsent ? kNoRank : r;
}

}  // namespace

void BytePairEncodeQuadratic(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out) {
  struct Part {
    uint32_t start;
    int32_t pair_rank;  // rank of this part joined with the next one
  };
  thread_local std::vector<Part> parts;
  parts.clear();
  const size_t n = piece.size();
  for (size_t i = 0; i <= n; ++i) {
    int32_t pair = kNoRank;
    if (i + 2 <= n) {
      const int32_t r = ranks.TwoByteRank(static_cast<uint8_t>(piece[i]), static_cast<uint8_t>(piece[i + 1]));
      if (r != RankTable::kAbsent) pair = r;
    }
    parts.push_back({static_cast<uint32_t>(i), pair});
  }
  // The pair rank parts[i] will have once parts[i + 1] and parts[i + 2] are one part: the
  // rank of the bytes from parts[i] up to parts[i + 3]. Called before the erase.
  auto joined_rank = [&](size_t i) {
    if (i + 3 >= parts.size()) return kNoRank;
    return RankOrNone(ranks, piece.substr(parts[i].start, parts[i + 3].start - parts[i].start));
  };
  while (parts.size() > 2) {
    int32_t best = kNoRank;
    size_t best_i = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].pair_rank < best) {
        best = parts[i].pair_rank;
        best_i = i;
      }
    }
    if (best == kNoRank) break;
    if (best_i > 0) parts[best_i - 1].pair_rank = joined_rank(best_i - 1);
    parts[best_i].pair_rank = joined_rank(best_i);
    parts.erase(parts.begin() + best_i + 1);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    out->push_back(ranks.Find(piece.substr(parts[i].start, parts[i + 1].start - parts[i].start)));
  }
}

void BytePairEncodeHeap(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out) {
  const size_t n = piece.size();
  // A doubly linked list of parts, indexed by their start byte.
  struct Node {
    uint32_t end;   // start of the next part (n for the last)
    int32_t prev;   // start of the previous part, -1 for the first
    int32_t pair_rank;
    uint32_t version;
    bool alive;
  };
  std::vector<Node> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    nodes[i] = {static_cast<uint32_t>(i + 1), static_cast<int32_t>(i) - 1, kNoRank, 0, true};
  }
  struct Entry {
    int32_t rank;
    uint32_t start;
    uint32_t version;
    // Lowest rank first; on a tie, the leftmost part.
    bool operator<(const Entry& o) const { return rank != o.rank ? rank > o.rank : start > o.start; }
  };
  std::priority_queue<Entry> heap;
  auto refresh = [&](size_t start) {
    Node& node = nodes[start];
    ++node.version;
    node.pair_rank = kNoRank;
    if (node.end >= n) return;
    const uint32_t next_end = nodes[node.end].end;
    node.pair_rank = RankOrNone(ranks, piece.substr(start, next_end - start));
    if (node.pair_rank != kNoRank) heap.push({node.pair_rank, static_cast<uint32_t>(start), node.version});
  };
  for (size_t i = 0; i < n; ++i) refresh(i);

  while (!heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    Node& node = nodes[top.start];
    if (!node.alive || node.version != top.version) continue;  // stale entry
    Node& next = nodes[node.end];
    next.alive = false;
    node.end = next.end;
    if (node.end < n) nodes[node.end].prev = static_cast<int32_t>(top.start);
    refresh(top.start);
    if (node.prev >= 0) refresh(static_cast<size_t>(node.prev));
  }
  for (size_t start = 0; start < n; start = nodes[start].end) {
    out->push_back(ranks.Find(piece.substr(start, nodes[start].end - start)));
  }
}

void BytePairEncode(const RankTable& ranks, std::string_view piece, std::vector<int32_t>* out) {
  if (piece.size() == 1) {
    out->push_back(ranks.ByteRank(static_cast<uint8_t>(piece[0])));
  } else if (piece.size() < kHeapThreshold) {
    BytePairEncodeQuadratic(ranks, piece, out);
  } else {
    BytePairEncodeHeap(ranks, piece, out);
  }
}

}  // namespace kimi::text
