// Merkle tree hashing, proofs and proof verification exactly as RFC 9162 section 2.1
// (the same tree as RFC 6962): leaf hash SHA-256(0x00 || data), interior node
// SHA-256(0x01 || left || right), MTH of the empty tree SHA-256("").
//
// Owns nothing: pure functions over spans of leaf hashes. Generation takes the leaf hashes of
// the whole tree (D[0:n]); verification needs only the proof, the sizes and the roots, which is
// what an outside verifier holds.
// Public header of audit/: other folders include it.
// Thread safety: every function may be called from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "audit/hash.h"
#include "kimi/status.h"

namespace kimi::audit {

Hash HashLeaf(std::string_view leaf_data);
Hash HashChildren(const Hash& left, const Hash& right);
Hash EmptyTreeRoot();

// MTH(D[0:n]) from the leaf hashes; EmptyTreeRoot() for an empty span.
Hash TreeRoot(std::span<const Hash> leaf_hashes);

// PATH(index, D[0:n]) of RFC 9162 2.1.3.1, with n = leaf_hashes.size().
// InvalidArgument unless index < n.
Result<std::vector<Hash>> InclusionPath(std::span<const Hash> leaf_hashes, uint64_t index);

// PROOF(old_size, D[0:n]) of RFC 9162 2.1.4.1. Empty when old_size is 0 or n.
// InvalidArgument when old_size > n.
Result<std::vector<Hash>> ConsistencyPath(std::span<const Hash> leaf_hashes, uint64_t old_size);

// RFC 9162 2.1.3.2. OK when leaf_hash at index is in the tree of tree_size leaves with root;
// Corruption (with the reason) otherwise.
Status VerifyInclusion(uint64_t index, uint64_t tree_size, const Hash& leaf_hash,
                       std::span<const Hash> path, const Hash& root);

// RFC 9162 2.1.4.2, extended by the trivial cases the RFC leaves to the caller:
// old_size == new_size needs an empty proof and equal roots; old_size == 0 needs an empty
// proof. Corruption otherwise.
Status VerifyConsistency(uint64_t old_size, uint64_t new_size, const Hash& old_root,
                         const Hash& new_root, std::span<const Hash> proof);

}  // namespace kimi::audit
