// The daemon's check before it extends its audit log: the log must verify against the
// appliance's own key and its own signed writer state, or the writer does not start.
//
// Incremental: the writer state (writer_state.h) carries the checkpoint of the previous start,
// so only the rows written since are read: each row's leaf, decoding, content hash and time
// order, the tree they rebuild against every head signed since and the writer's stored tree;
// every head is counted against the state, and rows past the last head are accepted only when
// the state says the writer was running (a crash), never after its clean stop. A database
// without a usable checkpoint is verified from seq 0. Rows below the checkpoint are left to
// the background verifier (background_verifier.h).
//
// Thread safety: runs on the caller's thread over the store it is given.
#pragma once

#include <cstdint>
#include <optional>

#include "audit/audit_store.h"
#include "audit/compact_tree.h"
#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

// What the writer goes on from.
struct VerifiedLog {
  CompactTree tree;                     // of every row
  uint64_t heads = 0;                   // signed heads stored
  uint64_t head_size = 0;               // the largest signed tree size
  std::optional<int64_t> last_time_ms;  // of the last row
  uint64_t rows_checked = 0;            // rows read (those past the checkpoint)
};

// Corruption naming the first bad sequence number when the log fails.
Result<VerifiedLog> VerifyBeforeExtending(AuditStore& store, const PublicKey& key);

}  // namespace kimi::audit
