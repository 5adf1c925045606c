// Building inclusion and consistency proofs from the audit database, for `kimictl audit prove`
// and `kimictl audit consistency`. Leaves are recomputed from the record rows (a row that
// fails verification stops the proof), and each proof is tied to a stored signed head.
// Public header of audit/: other folders include it.
// Thread safety: pure over the store it is given.
#pragma once

#include <cstdint>
#include <optional>

#include "audit/audit_store.h"
#include "audit/proof_format.h"
#include "kimi/status.h"

namespace kimi::audit {

// Proof that record seq is in the tree of the given signed head size, or of the latest signed
// head when tree_size is empty. FailedPrecondition when no signed head covers seq yet.
Result<InclusionProof> BuildInclusionProof(AuditStore& store, uint64_t seq, std::optional<uint64_t> tree_size);

// Proof that the tree of the latest signed head (or of the head at new_size) extends the tree
// of old_size. old_head is filled when a head was signed at exactly old_size.
Result<ConsistencyProof> BuildConsistencyProof(AuditStore& store, uint64_t old_size,
                                               std::optional<uint64_t> new_size);

}  // namespace kimi::audit
