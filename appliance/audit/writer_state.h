// WriterState: what the audit writer last said about its own log, signed with the audit key
// and kept in audit.db beside the heads (one row, replaced in the same transaction as each
// signed head).
//
// It lets the daemon and every verifier tell rows the appliance wrote from rows someone
// appended: `clean` is set only by the final head of a clean stop, so rows past head_size
// while it is set were not written by this appliance. `heads` (how many signed heads the table
// held) and head_size tie the state to the heads: a deleted or added head, or an older state
// put back, no longer matches. verified_size/verified_root are the start-up checkpoint: the
// rows [0, verified_size) were verified at a start, and the next start verifies only the rows
// after them (verified_edge, stored unsigned, is that tree's compact edge; it is trusted only
// when its root equals the signed verified_root).
//
// Signing bytes (113 bytes):
//   "KIMI-AUDIT-WST/1" (16 ASCII bytes) || key_id (32) || heads (u64 BE) || head_size (u64 BE)
//   || verified_size (u64 BE) || verified_root (32) || timestamp_ms (u64 BE) || clean (1 byte)
// The context differs from a signed head's, so neither signature can stand for the other.
//
// Thread safety: value type and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "audit/audit_key.h"
#include "audit/compact_tree.h"
#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

inline constexpr std::string_view kWriterStateContext = "KIMI-AUDIT-WST/1";

struct WriterState {
  uint64_t heads = 0;          // signed heads stored, this state's head included
  uint64_t head_size = 0;      // the largest signed tree size (0 without a head)
  uint64_t verified_size = 0;  // rows verified at the last start
  Hash verified_root{};
  int64_t timestamp_ms = 0;
  bool clean = false;          // written by the final head of a clean stop
  Hash key_id{};
  Signature signature{};
  std::string verified_edge;   // CompactTree::SerializeEdge() at verified_size; not signed
};

std::string WriterStateSigningBytes(const WriterState& state);

// Fills key_id, verified_root (from the tree), verified_edge and signature.
WriterState SignWriterState(const AuditKey& key, WriterState state, const CompactTree& verified);

// OK when the key id names this key and the signature is valid; Corruption otherwise.
Status VerifyWriterState(const WriterState& state, const PublicKey& key);

// The checkpoint tree the state vouches for; Corruption when the stored edge does not have the
// signed root (then everything must be verified from seq 0).
Result<CompactTree> VerifiedTree(const WriterState& state);

}  // namespace kimi::audit
