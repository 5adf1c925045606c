// Verification of an export bundle (log_export.h, ExportOptions::with_proofs) with nothing but
// the audit public key: what `kimictl audit verify --export FILE` and an outside auditor run.
//
// Checks, line by line: the first line names a known bundle format; every record decodes,
// its canonical bytes hash to its leaf_hash, its stored content (when present) hashes to its
// content_sha256, sequence numbers rise strictly, time_ms never goes backwards (time_order.h),
// and its inclusion path leads to the root of
// the bundle's signed head of that tree size; every signed head's signature verifies with the
// key. The first bad sequence number is reported as the log verifier does.
// Public header of audit/: other folders include it.
// Thread safety: pure function over the stream it is given.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

struct BundleReport {
  uint64_t records = 0;
  uint64_t heads = 0;
  std::optional<uint64_t> first_bad_seq;
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

// A report (a forged or edited bundle is a report, not an error); InvalidArgument only when
// the input is not a bundle at all (no header line).
Result<BundleReport> VerifyExportBundle(std::istream& in, const PublicKey& key);

}  // namespace kimi::audit
