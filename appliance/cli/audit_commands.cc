#include "cli/audit_commands.h"

#include <charconv>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <span>

#include "audit/audit_key.h"
#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/audit_text.h"
#include "audit/export_verifier.h"
#include "audit/log_export.h"
#include "audit/log_proofs.h"
#include "audit/log_verifier.h"
#include "audit/proof_format.h"
#include "audit/signed_head.h"
#include "cli/options.h"
#include "kimi/durable_file.h"

namespace kimi::cli {
namespace {

using audit::AuditStore;

constexpr int kExitOk = 0;
constexpr int kExitBad = 1;
constexpr int kExitUsage = 2;

using Args = ParsedArgs;

// The options `names` (each takes a value, "--out F" or "--out=F") with the common ones, and at
// most `words` positional words.
Result<Args> ParseAuditArgs(const std::vector<std::string>& argv, std::vector<std::string> names, size_t words = 0) {
  names.insert(names.end(), {"data-dir", "db", "public-key"});
  for (std::string& name : names) name = "--" + name;
  Args a = ParseArgs(argv, names, {}, words);
  if (!a.error.empty()) return Status::InvalidArgument(a.error);
  return a;
}

bool Given(const Args& a, const std::string& name) { return a.Gives("--" + name); }

std::string Opt(const Args& a, const std::string& name, const std::string& fallback = "") {
  return Given(a, name) ? a.One("--" + name) : fallback;
}

Result<uint64_t> ParseCount(const std::string& text, const char* what) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument(std::string(what) + " must be a non-negative integer, got '" + text + "'");
  }
  return v;
}

std::string DataDir(const Args& a) {
  if (Given(a, "data-dir")) return Opt(a, "data-dir");
  const char* env = std::getenv("KIMI_DATA_DIR");
  return (env != nullptr && *env != '\0') ? env : "/var/lib/kimi-appliance";
}

Result<std::unique_ptr<AuditStore>> OpenStore(const Args& a) {
  const std::string path = Opt(a, "db", DataDir(a) + "/" + std::string(audit::kAuditDbFile));
  audit::AuditStoreOptions options;
  options.read_only = true;
  return AuditStore::Open(path, options);
}

Result<audit::PublicKey> LoadKey(const Args& a) {
  const std::string path = Opt(a, "public-key", DataDir(a) + "/" + std::string(audit::kAuditPublicKeyFile));
  KIMI_ASSIGN_OR_RETURN(std::string text, audit::ReadTextFile(path));
  Result<audit::PublicKey> key = audit::ParsePublicKey(text);
  if (!key.ok()) return key.status().WithContext(path);
  return key;
}

// Writes text to --out FILE, or to out.
Status Emit(const Args& a, const std::string& text, std::ostream& out) {
  const std::string path = Opt(a, "out");
  if (path.empty()) {
    out << text;
    return Status::OK();
  }
  return WriteFileAtomically(path, text);
}

int Fail(const Status& s, std::ostream& err) {
  err << "error: " << s.ToString() << "\n";
  return s.code() == Status::Code::kCorruption ? kExitBad : kExitUsage;
}

// The newest signed head (largest size; the later of equal sizes); nullopt when there is none.
Result<std::optional<audit::SignedTreeHead>> LatestHead(AuditStore& store) {
  KIMI_ASSIGN_OR_RETURN(std::vector<audit::SignedTreeHead> heads, store.ReadHeads());
  std::optional<audit::SignedTreeHead> latest;
  for (const audit::SignedTreeHead& h : heads) {
    if (!latest || h.tree_size >= latest->tree_size) latest = h;
  }
  return latest;
}

// Verifies the log with the kept heads and prints the report; true when it verifies. A
// database that cannot be read prints the error and counts as not verified.
bool VerifyStore(AuditStore& store, const audit::PublicKey& key, std::span<const audit::SignedTreeHead> kept,
                 std::ostream& out, std::ostream& err) {
  Result<audit::VerifyReport> report = audit::VerifyAuditLog(store, key, kept);
  if (!report.ok()) {
    err << "error: " << report.status().ToString() << "\n";
    return false;
  }
  out << "records: " << report->records << "\nsigned heads: " << report->heads;
  if (!kept.empty()) out << " (" << kept.size() << " kept)";
  out << "\ncovered by a good signed head: " << report->covered_size << "\n";
  for (const std::string& n : report->notes) out << "note: " << n << "\n";
  if (report->ok()) {
    out << "audit log verifies\n";
    return true;
  }
  for (const std::string& p : report->problems) out << "problem: " << p << "\n";
  out << "FAILED: first bad sequence number " << *report->first_bad_seq << "\n";
  err << "audit log verification failed at seq " << *report->first_bad_seq << "\n";
  return false;
}

}  // namespace

namespace {

// `kimictl audit verify --export BUNDLE`: an export bundle checked with the public key alone.
int VerifyBundleFile(const std::string& path, const audit::PublicKey& key, std::ostream& out, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(Status::IOError("cannot read " + path), err);
  Result<audit::BundleReport> report = audit::VerifyExportBundle(in, key);
  if (!report.ok()) return Fail(report.status().WithContext(path), err);
  out << "records: " << report->records << "\nsigned heads: " << report->heads << "\n";
  if (report->ok()) {
    out << "export bundle verifies\n";
    return kExitOk;
  }
  for (const std::string& p : report->problems) out << "problem: " << p << "\n";
  if (report->first_bad_seq) out << "FAILED: first bad sequence number " << *report->first_bad_seq << "\n";
  else out << "FAILED\n";
  err << "export bundle verification failed\n";
  return kExitBad;
}

}  // namespace

int RunAuditVerify(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"head", "export"});
  if (!a.ok()) return Fail(a.status(), err);
  Result<audit::PublicKey> key = LoadKey(*a);
  if (!key.ok()) return Fail(key.status(), err);
  if (Given(*a, "export")) return VerifyBundleFile(Opt(*a, "export"), *key, out, err);
  std::vector<audit::SignedTreeHead> kept;
  if (Given(*a, "head")) {
    Result<std::vector<audit::SignedTreeHead>> heads = audit::ReadTreeHeadsFile(Opt(*a, "head"));
    if (!heads.ok()) return Fail(heads.status(), err);
    kept = std::move(heads).value();
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  return VerifyStore(**store, *key, kept, out, err) ? kExitOk : kExitBad;
}

int RunAuditWitness(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"append", "out"});
  if (!a.ok()) return Fail(a.status(), err);
  if (!a->positional.empty() || (Given(*a, "append") && Given(*a, "out"))) {
    err << "usage: kimictl audit witness [--append WITNESS.jsonl | --out HEAD.json]\n";
    return kExitUsage;
  }
  Result<audit::PublicKey> key = LoadKey(*a);
  if (!key.ok()) return Fail(key.status(), err);
  const std::string append = Opt(*a, "append");
  std::string witnessed;  // the file's text, kept byte for byte when the new head is added
  std::vector<audit::SignedTreeHead> kept;
  if (!append.empty() && std::filesystem::exists(append)) {
    Result<std::string> text = audit::ReadTextFile(append);
    if (!text.ok()) return Fail(text.status(), err);
    witnessed = *std::move(text);
    Result<std::vector<audit::SignedTreeHead>> heads = audit::ParseTreeHeads(witnessed, append);
    if (!heads.ok()) return Fail(heads.status(), err);
    kept = std::move(heads).value();
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  Result<std::optional<audit::SignedTreeHead>> latest = LatestHead(**store);
  if (!latest.ok()) return Fail(latest.status(), err);
  if (!latest->has_value()) return Fail(Status::FailedPrecondition("the audit log has no signed head yet"), err);
  const audit::SignedTreeHead head = **latest;
  // A head is witnessed only when it and the log verify, against every head witnessed before.
  std::vector<audit::SignedTreeHead> checked = kept;
  checked.push_back(head);
  if (!VerifyStore(**store, *key, checked, err, err)) {
    err << "nothing witnessed\n";
    return kExitBad;
  }
  Status s;
  if (append.empty()) {
    s = Emit(*a, audit::TreeHeadToJson(head).dump(Opt(*a, "out").empty() ? -1 : 2) + "\n", out);
  } else if (std::find(kept.begin(), kept.end(), head) == kept.end()) {
    // The whole file rewritten with the new line: a line torn by a crash would make the
    // auditor's file unreadable to the next witness and verify.
    s = WriteFileAtomically(append, witnessed + audit::TreeHeadToJson(head).dump() + "\n");
  }
  if (!s.ok()) return Fail(s, err);
  err << "witnessed signed head: size " << head.tree_size << ", root " << audit::ToHex(head.root_hash) << "\n";
  return kExitOk;
}

int RunAuditProve(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"tree-size", "out"}, 1);
  if (!a.ok()) return Fail(a.status(), err);
  if (a->positional.size() != 1) {
    err << "usage: kimictl audit prove SEQ [--tree-size N] [--out FILE]\n";
    return kExitUsage;
  }
  Result<uint64_t> seq = ParseCount(a->positional[0], "SEQ");
  if (!seq.ok()) return Fail(seq.status(), err);
  std::optional<uint64_t> size;
  if (Given(*a, "tree-size")) {
    Result<uint64_t> s = ParseCount(Opt(*a, "tree-size"), "--tree-size");
    if (!s.ok()) return Fail(s.status(), err);
    size = *s;
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  Result<audit::InclusionProof> proof = audit::BuildInclusionProof(**store, *seq, size);
  if (!proof.ok()) return Fail(proof.status(), err);
  Status s = Emit(*a, audit::InclusionProofToJson(*proof).dump(2) + "\n", out);
  return s.ok() ? kExitOk : Fail(s, err);
}

int RunAuditConsistency(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"new-size", "out"}, 1);
  if (!a.ok()) return Fail(a.status(), err);
  if (a->positional.size() != 1) {
    err << "usage: kimictl audit consistency OLD_SIZE [--new-size N] [--out FILE]\n";
    return kExitUsage;
  }
  Result<uint64_t> old_size = ParseCount(a->positional[0], "OLD_SIZE");
  if (!old_size.ok()) return Fail(old_size.status(), err);
  std::optional<uint64_t> new_size;
  if (Given(*a, "new-size")) {
    Result<uint64_t> s = ParseCount(Opt(*a, "new-size"), "--new-size");
    if (!s.ok()) return Fail(s.status(), err);
    new_size = *s;
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  Result<audit::ConsistencyProof> proof = audit::BuildConsistencyProof(**store, *old_size, new_size);
  if (!proof.ok()) return Fail(proof.status(), err);
  Status s = Emit(*a, audit::ConsistencyProofToJson(*proof).dump(2) + "\n", out);
  return s.ok() ? kExitOk : Fail(s, err);
}

int RunAuditExport(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"since", "until", "format", "out"});
  if (!a.ok()) return Fail(a.status(), err);
  if (!a->positional.empty()) {
    err << "usage: kimictl audit export --format jsonl|csv|bundle [--since T] [--until T] [--out FILE]\n";
    return kExitUsage;
  }
  audit::ExportOptions options;
  if (Given(*a, "since")) {
    Result<int64_t> t = audit::ParseUtcMillis(Opt(*a, "since"));
    if (!t.ok()) return Fail(t.status(), err);
    options.records.since_ms = *t;
  }
  if (Given(*a, "until")) {
    Result<int64_t> t = audit::ParseUtcMillis(Opt(*a, "until"));
    if (!t.ok()) return Fail(t.status(), err);
    options.records.until_ms = *t;
  }
  // No default: the usage requires --format, so without one the check below refuses (exit 2).
  const std::string format = Opt(*a, "format");
  if (format == "csv") {
    options.format = audit::ExportFormat::kCsv;
  } else if (format == "bundle") {
    options.with_proofs = true;  // JSON lines with inclusion paths: `audit verify --export`
  } else if (format != "jsonl") {
    return Fail(Status::InvalidArgument("--format must be jsonl, csv or bundle"), err);
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  // --out FILE is replaced only by a complete export: one that fails halfway leaves it as it was.
  const std::string path = Opt(*a, "out");
  std::unique_ptr<AtomicFileWriter> file;
  if (!path.empty()) {
    Result<std::unique_ptr<AtomicFileWriter>> created = AtomicFileWriter::Create(path);
    if (!created.ok()) return Fail(created.status(), err);
    file = std::move(*created);
  }
  Result<audit::ExportSummary> summary = audit::ExportAuditLog(**store, options, file ? file->stream() : out);
  if (!summary.ok()) return Fail(summary.status(), err);
  if (file) {
    if (Status committed = file->Commit(); !committed.ok()) return Fail(committed, err);
  }
  err << "exported " << summary->records << " record(s) and " << summary->heads << " signed head(s)\n";
  if (summary->records > 0 && !summary->fully_covered) {
    err << "note: the last exported records are not yet covered by a signed head\n";
  }
  return kExitOk;
}

int RunAuditList(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"outcome", "action", "actor", "model", "request-id", "client-request-id",
                                          "since", "until", "limit"});
  if (!a.ok()) return Fail(a.status(), err);
  if (!a->positional.empty()) {
    err << "usage: kimictl audit list [--outcome O] [--action A] [--actor A] [--model M] [--request-id ID] "
           "[--client-request-id ID] [--since T] [--until T] [--limit N]\n";
    return kExitUsage;
  }
  audit::RecordQuery q;
  q.with_content = false;
  // Stored values went through AuditText (escaped, bounded); a filter is made the same way.
  for (auto [name, field] : {std::pair{"outcome", &q.outcome}, {"action", &q.action}, {"actor", &q.actor},
                             {"model", &q.model}, {"request-id", &q.request_id},
                             {"client-request-id", &q.client_request_id}}) {
    if (Given(*a, name)) *field = audit::AuditText(Opt(*a, name));
  }
  for (auto [name, field] : {std::pair{"since", &q.since_ms}, {"until", &q.until_ms}}) {
    if (!Given(*a, name)) continue;
    Result<int64_t> t = audit::ParseUtcMillis(Opt(*a, name));
    if (!t.ok()) return Fail(t.status(), err);
    *field = *t;
  }
  if (Given(*a, "limit")) {
    Result<uint64_t> limit = ParseCount(Opt(*a, "limit"), "--limit");
    if (!limit.ok()) return Fail(limit.status(), err);
    q.limit = *limit;
  }
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  uint64_t listed = 0;
  Status s = (*store)->ScanRecords(q, [&](audit::StoredRecord& row) {
    nlohmann::json j = audit::RecordToJson(row.record);
    if (!row.decode_error.ok()) j["decode_error"] = row.decode_error.message();
    out << j.dump() << "\n";
    ++listed;
    return Status::OK();
  });
  if (!s.ok()) return Fail(s, err);
  err << listed << " record(s)\n";
  return kExitOk;
}

int RunAuditHead(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Result<Args> a = ParseAuditArgs(argv, {"out"});
  if (!a.ok()) return Fail(a.status(), err);
  Result<std::unique_ptr<AuditStore>> store = OpenStore(*a);
  if (!store.ok()) return Fail(store.status(), err);
  Result<std::optional<audit::SignedTreeHead>> latest = LatestHead(**store);
  if (!latest.ok()) return Fail(latest.status(), err);
  if (!latest->has_value()) return Fail(Status::FailedPrecondition("the audit log has no signed head yet"), err);
  Status s = Emit(*a, audit::TreeHeadToJson(**latest).dump(2) + "\n", out);
  return s.ok() ? kExitOk : Fail(s, err);
}

int RunAuditVerify(const std::vector<std::string>& args) { return RunAuditVerify(args, std::cout, std::cerr); }
int RunAuditProve(const std::vector<std::string>& args) { return RunAuditProve(args, std::cout, std::cerr); }
int RunAuditConsistency(const std::vector<std::string>& args) { return RunAuditConsistency(args, std::cout, std::cerr); }
int RunAuditExport(const std::vector<std::string>& args) { return RunAuditExport(args, std::cout, std::cerr); }
int RunAuditHead(const std::vector<std::string>& args) { return RunAuditHead(args, std::cout, std::cerr); }
int RunAuditWitness(const std::vector<std::string>& args) { return RunAuditWitness(args, std::cout, std::cerr); }
int RunAuditList(const std::vector<std::string>& args) { return RunAuditList(args, std::cout, std::cerr); }

}  // namespace kimi::cli
