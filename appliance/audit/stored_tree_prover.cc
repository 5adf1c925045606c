#include "audit/stored_tree_prover.h"

#include <algorithm>
#include <bit>

#include "audit/compact_tree.h"

namespace kimi::audit {

Result<Hash> StoredTreeProver::RangeRoot(uint64_t begin, uint64_t end) {
  for (const Range& r : previous_) {
    if (r.begin == begin && r.end == end) return r.root;
  }
  CompactTree tree;
  KIMI_RETURN_IF_ERROR(store_.ScanLeafHashes(begin, end, [&](const Hash& leaf) { tree.AppendLeafHash(leaf); }));
  leaves_read_ += end - begin;
  return tree.Root();
}

Result<std::vector<Hash>> StoredTreeProver::InclusionPath(uint64_t index) {
  if (index >= tree_size_) {
    return Status::InvalidArgument("leaf " + std::to_string(index) + " is not in a tree of " +
                                   std::to_string(tree_size_));
  }
  // Walk down from the root as RFC 9162 2.1.3.1 splits D[lo:hi] at the largest power of two
  // below its size; the sibling ranges come out root first, the path lists them leaf first.
  std::vector<Range> ranges;
  uint64_t lo = 0;
  uint64_t hi = tree_size_;
  while (hi - lo > 1) {
    const uint64_t k = std::bit_floor(hi - lo - 1);
    if (index - lo < k) {
      ranges.push_back({lo + k, hi, {}});
      hi = lo + k;
    } else {
      ranges.push_back({lo, lo + k, {}});
      lo += k;
    }
  }
  std::reverse(ranges.begin(), ranges.end());
  std::vector<Hash> path;
  path.reserve(ranges.size());
  for (Range& r : ranges) {
    KIMI_ASSIGN_OR_RETURN(r.root, RangeRoot(r.begin, r.end));
    path.push_back(r.root);
  }
  previous_ = std::move(ranges);
  return path;
}

}  // namespace kimi::audit
