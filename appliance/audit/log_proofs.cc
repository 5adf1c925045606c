#include "audit/log_proofs.h"

#include "audit/log_verifier.h"
#include "audit/merkle.h"

namespace kimi::audit {
namespace {

// The latest head with the wanted size, or the latest head of all when size is empty.
Result<SignedTreeHead> FindHead(AuditStore& store, std::optional<uint64_t> size) {
  KIMI_ASSIGN_OR_RETURN(std::vector<SignedTreeHead> heads, store.ReadHeads());
  std::optional<SignedTreeHead> best;
  for (const SignedTreeHead& h : heads) {
    if (size ? h.tree_size == *size : (!best || h.tree_size >= best->tree_size)) best = h;
  }
  if (!best) {
    return size ? Status::NotFound("no signed head for tree size " + std::to_string(*size))
                : Status::FailedPrecondition("the audit log has no signed head yet");
  }
  return *best;
}

}  // namespace

Result<InclusionProof> BuildInclusionProof(AuditStore& store, uint64_t seq, std::optional<uint64_t> tree_size) {
  KIMI_ASSIGN_OR_RETURN(SignedTreeHead head, FindHead(store, tree_size));
  if (seq >= head.tree_size) {
    return Status::FailedPrecondition("record " + std::to_string(seq) + " is not covered by the signed head of size " +
                                      std::to_string(head.tree_size) + "; wait for the next signed head");
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<Hash> leaves, RecomputeLeafHashes(store, head.tree_size));
  if (TreeRoot(leaves) != head.root_hash) {
    return Status::Corruption("the records do not match the signed head of size " + std::to_string(head.tree_size) +
                              "; run audit verify");
  }
  KIMI_ASSIGN_OR_RETURN(std::optional<StoredRecord> row, store.ReadRecord(seq));
  if (!row) return Status::NotFound("record " + std::to_string(seq) + " is missing");
  InclusionProof p;
  p.leaf_index = seq;
  p.tree_size = head.tree_size;
  p.record = CanonicalRecordBytes(row->record);
  p.leaf_hash = leaves[seq];
  KIMI_ASSIGN_OR_RETURN(p.audit_path, InclusionPath(leaves, seq));
  p.signed_head = head;
  return p;
}

Result<ConsistencyProof> BuildConsistencyProof(AuditStore& store, uint64_t old_size,
                                               std::optional<uint64_t> new_size) {
  KIMI_ASSIGN_OR_RETURN(SignedTreeHead head, FindHead(store, new_size));
  if (old_size > head.tree_size) {
    return Status::InvalidArgument("old size " + std::to_string(old_size) + " exceeds the signed head's size " +
                                   std::to_string(head.tree_size));
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<Hash> leaves, RecomputeLeafHashes(store, head.tree_size));
  if (TreeRoot(leaves) != head.root_hash) {
    return Status::Corruption("the records do not match the signed head of size " + std::to_string(head.tree_size) +
                              "; run audit verify");
  }
  ConsistencyProof p;
  p.old_size = old_size;
  p.new_size = head.tree_size;
  p.old_root = TreeRoot(std::span<const Hash>(leaves).subspan(0, old_size));
  p.new_root = head.root_hash;
  KIMI_ASSIGN_OR_RETURN(p.proof, ConsistencyPath(leaves, old_size));
  p.new_head = head;
  Result<SignedTreeHead> old_head = FindHead(store, old_size);
  if (old_head.ok() && old_head->root_hash == p.old_root) p.old_head = *old_head;
  return p;
}

}  // namespace kimi::audit
