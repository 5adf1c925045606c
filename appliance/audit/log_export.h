// Export of audit records in a time range, with the signed heads that cover them, as JSON
// lines or CSV (`kimictl audit export`). Formats are in docs/audit.md.
// Public header of audit/: other folders include it.
// Thread safety: pure over the store it is given.
#pragma once

#include <cstdint>
#include <ostream>

#include "audit/audit_store.h"
#include "kimi/status.h"

namespace kimi::audit {

enum class ExportFormat { kJsonl, kCsv };

struct ExportOptions {
  // Which records: the time range and the search filters (audit_store.h). The export is
  // always in rising sequence order, complete: the query's order, seq range and limit are not
  // used.
  RecordQuery records;
  ExportFormat format = ExportFormat::kJsonl;
  // A verifiable bundle (JSON lines only): a first line naming the bundle format and range,
  // and each record with its inclusion path in the tree of the one signed head that covers
  // the last exported record, which is the bundle's only head. export_verifier.h checks it
  // with nothing but the public key. Records no signed head covers yet (committed after the
  // newest head) are left out; sign a head first to include them.
  bool with_proofs = false;
};

// Version of the bundle layout, written into its first line.
inline constexpr int64_t kExportBundleFormat = 1;

struct ExportSummary {
  uint64_t records = 0;
  uint64_t heads = 0;
  bool fully_covered = false;  // a signed head covers the last exported record
};

// Writes the records options.records selects in sequence order, then every signed head from the first that covers the first exported record up to the first that covers the
// last one.
Result<ExportSummary> ExportAuditLog(AuditStore& store, const ExportOptions& options, std::ostream& out);

// One CSV field: quoted per RFC 4180 when needed (and when it holds ';'); where a spreadsheet
// would start a formula (= + - @ tab or CR first in the value, or right after a ';', where a
// reader whose list separator is ';' starts a cell) a ' goes in front, and the field is quoted.
std::string CsvField(std::string_view value);

}  // namespace kimi::audit
