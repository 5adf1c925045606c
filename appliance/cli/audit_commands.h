// `kimictl audit ...` subcommands: verify, prove, consistency, export, head, witness, list.
// kimictl's main parses the command word and hands the remaining arguments here.
//
// These work on the audit database read-only (audit.db in the data directory); they never
// write it, so they may run while the daemon runs. Exit codes: 0 success, 1 verification
// failed (tampering found), 2 usage or I/O error.
//
// Common options:
//   --data-dir DIR      data directory (default: $KIMI_DATA_DIR, else /var/lib/kimi-appliance)
//   --db PATH           audit database (default: DIR/audit.db)
//   --public-key PATH   public key JSON or hex (default: DIR/audit-ed25519.pub.json). An
//                       auditor should pass the copy they keep, not the one beside the data.
//
// Thread safety: each call is independent.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kimi::cli {

// audit verify [--head KEPT_HEADS] [common options]
// KEPT_HEADS: signed heads the auditor kept (`audit head` writes one, `audit witness --append`
// a file of many); each must be signed by the key and match the log at its size.
int RunAuditVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit prove SEQ [--tree-size N] [--out FILE] [common options]
int RunAuditProve(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit consistency OLD_SIZE [--new-size N] [--out FILE] [common options]
int RunAuditConsistency(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit export --format jsonl|csv|bundle [--since T] [--until T] [--out FILE] [common options]
// T is YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS[.mmm]Z or Unix milliseconds; until is exclusive.
int RunAuditExport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit head [--out FILE] [common options]: prints the latest signed head (for auditors).
int RunAuditHead(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit witness [--append WITNESS.jsonl | --out HEAD.json] [common options]: verifies the log
// (against every head already in WITNESS.jsonl), then hands out the newest signed head: one
// JSON line on stdout, pretty JSON to --out, or a line appended to WITNESS.jsonl (not repeated
// when that head is already there). Exit 1, nothing witnessed, when the log fails.
int RunAuditWitness(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// audit list [--outcome O] [--action A] [--actor A] [--model M] [--request-id ID]
//            [--client-request-id ID] [--since T] [--until T] [--limit N] [common options]
// Prints the matching records, one JSON object a line (GET /admin/v1/audit's fields, no
// content), oldest first; `--outcome interrupted` lists the streams the daemon cut short.
int RunAuditList(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The same, on std::cout and std::cerr.
int RunAuditVerify(const std::vector<std::string>& args);
int RunAuditProve(const std::vector<std::string>& args);
int RunAuditConsistency(const std::vector<std::string>& args);
int RunAuditExport(const std::vector<std::string>& args);
int RunAuditHead(const std::vector<std::string>& args);
int RunAuditWitness(const std::vector<std::string>& args);
int RunAuditList(const std::vector<std::string>& args);

}  // namespace kimi::cli
