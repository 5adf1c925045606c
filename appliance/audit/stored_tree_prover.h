// StoredTreeProver: inclusion paths (RFC 9162 PATH) in the tree of the leaf hashes stored in
// audit.db, computed with memory bounded by the tree's height instead of its size, so that an
// export of millions of records streams.
//
// Each path entry is the root of a range of leaves, computed by reading that range's stored
// leaf hashes in order through a compact tree (O(log n) hashes). The ranges of the previous
// path are kept: consecutive records share nearly all of them, so an export that asks in
// increasing index order reads every range once, O(n log n) leaf reads at most, never more
// than one range's hashes at a time.
//
// The stored leaf hashes are what the writer committed; a bundle built from altered ones does
// not verify against the signed head, so the export checks only the records it ships
// (against their stored leaf hash) and leaves the rest to the verifier.
//
// Thread safety: none; one export owns one prover and its store.
#pragma once

#include <cstdint>
#include <vector>

#include "audit/audit_store.h"
#include "audit/hash.h"
#include "kimi/status.h"

namespace kimi::audit {

class StoredTreeProver {
 public:
  // Precondition: the store outlives the prover.
  StoredTreeProver(AuditStore& store, uint64_t tree_size) : store_(store), tree_size_(tree_size) {}

  // PATH(index, D[0:tree_size]); InvalidArgument when index >= tree_size, Corruption when a
  // stored leaf is missing. Any order is correct; increasing order is the fast one.
  Result<std::vector<Hash>> InclusionPath(uint64_t index);

  // Leaf hashes read so far (for tests of the cost bound).
  uint64_t leaves_read() const { return leaves_read_; }

 private:
  struct Range {
    uint64_t begin = 0;
    uint64_t end = 0;
    Hash root{};
  };
  Result<Hash> RangeRoot(uint64_t begin, uint64_t end);

  AuditStore& store_;
  const uint64_t tree_size_;
  std::vector<Range> previous_;  // the last path's ranges, at most 64
  uint64_t leaves_read_ = 0;
};

}  // namespace kimi::audit
