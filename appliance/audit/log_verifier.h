// Verification of a whole audit database: recompute every leaf from the record rows, rebuild
// the tree, and check every signed head (signature with the given public key, and root at its
// size). What `kimictl audit verify` runs.
//
// The first bad sequence number is the smallest of:
//  - the first seq that is missing (a deleted row; rows must be dense from 0);
//  - the first row whose columns do not decode strictly, whose recomputed leaf hash differs
//    from the leaf hash the writer stored (an edited, swapped or inserted row), or whose
//    stored content no longer hashes to its content_sha256;
//  - for a head whose signature fails (forged): the size of the last good head below it, i.e.
//    the first record that head claims to cover that no genuine head vouches for;
//  - for a genuine head whose root differs from the recomputed root at its size: the first seq
//    after the last head that matched (rows rewritten together with their stored leaf hashes
//    can only be located to that range), or the row count when the head covers more rows
//    than exist (rows deleted at the end).
//  - for rows past the last head: the writer's stored tree must agree with them.
//  - the first record whose time_ms is earlier than its predecessor's (time_order.h).
//  - the first stream end record that ends no open stream start of its request (stream_links.h).
//  - the writer state (writer_state.h): a state not signed by the key, or one whose head
//    count or largest size differs from the stored heads: the largest head's size; after a
//    clean stop (or without a state) every row past the last signed head is foreign: the
//    first such seq.
// Public header of audit/: other folders include it.
// Thread safety: pure over the store it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "audit/compact_tree.h"
#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

struct VerifyReport {
  uint64_t records = 0;        // rows read
  uint64_t heads = 0;          // signed heads checked
  uint64_t covered_size = 0;   // largest tree size vouched for by a good head
  std::optional<uint64_t> first_bad_seq;
  std::vector<std::string> problems;  // every problem found, first-found first
  std::vector<std::string> notes;     // not failures: e.g. records not yet covered by a head
  std::optional<int64_t> last_time_ms;  // of the last record (the highest time seen)
  bool ok() const { return problems.empty(); }
};

struct VerifyOptions {
  // Signed heads an auditor kept outside the database (a witness file); checked like the
  // stored ones, which also catches heads deleted from the database and rewrites they cover.
  std::span<const SignedTreeHead> kept_heads;
  // The rows [0, from->size()) were verified before (the writer's start-up checkpoint,
  // writer_state.h): they are not read again, and only heads of at least that size are checked
  // (every head still counts against the writer state). nullopt: everything from seq 0.
  std::optional<CompactTree> from;
  // Polled every row; when it returns true verification stops with Cancelled.
  std::function<bool()> cancelled;
};

// Returns a report (tampering is a report, not an error); an error only when the database
// cannot be read at all. Reads one snapshot of the database, so a live writer does not
// disturb it. Precondition: store is not inside BeginSnapshot().
Result<VerifyReport> VerifyAuditLog(AuditStore& store, const PublicKey& key, const VerifyOptions& options);
Result<VerifyReport> VerifyAuditLog(AuditStore& store, const PublicKey& key,
                                    std::span<const SignedTreeHead> kept_heads = {});

// "seq N (first problem at N); K problem(s)" for a report that failed.
std::string DescribeFailure(const VerifyReport& report);

// Leaf hashes recomputed from the rows [0, size); Corruption naming the first bad row when a
// row is missing, malformed or disagrees with its stored leaf hash.
Result<std::vector<Hash>> RecomputeLeafHashes(AuditStore& store, uint64_t size);

}  // namespace kimi::audit
