// CompactTree: the right edge of an append-only Merkle tree (RFC 9162 hashing), enough to
// append a leaf in O(log n) and to compute the root without the leaves.
//
// It holds one hash per set bit of the size: the roots of the perfect subtrees that the tree
// of `size` leaves decomposes into, largest (leftmost) first. The audit writer keeps one in
// memory and stores it with every committed batch.
//
// Thread safety: a value type; not synchronised.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/hash.h"
#include "kimi/status.h"

namespace kimi::audit {

class CompactTree {
 public:
  CompactTree() = default;

  // Rebuilds from a size and its perfect-subtree roots (as returned by edge()).
  // Corruption unless there is exactly one hash per set bit of size.
  static Result<CompactTree> FromEdge(uint64_t size, std::vector<Hash> edge);

  void AppendLeafHash(const Hash& leaf_hash);
  uint64_t size() const { return size_; }
  const std::vector<Hash>& edge() const { return edge_; }
  // MTH of the whole tree.
  Hash Root() const;

  // Bytes for storage: the edge hashes concatenated (32 bytes each); size is stored beside.
  std::string SerializeEdge() const;
  static Result<CompactTree> Deserialize(uint64_t size, std::string_view edge_bytes);

  bool operator==(const CompactTree&) const = default;

 private:
  uint64_t size_ = 0;
  std::vector<Hash> edge_;
};

}  // namespace kimi::audit
