#include "audit/log_export.h"

#include <algorithm>
#include <limits>

#include "audit/merkle.h"
#include "audit/stored_tree_prover.h"

namespace kimi::audit {
namespace {

constexpr const char* kCsvHeader =
    "type,seq,time,time_ms,actor,role,source,request_id,action,target,model,model_digest,outcome,http_status,"
    "prompt_tokens,completion_tokens,ttft_us,total_us,policy,request_sha256,response_sha256,detail,"
    "content_sha256,v,backend,route_decision,attempts,client_request_id,start_seq,leaf_hash,tree_size,timestamp_ms,root_hash,key_id,"
    "signature";

void WriteCsvRecord(const AuditRecord& r, const Hash& leaf, std::ostream& out) {
  // Appends instead of operator+ chains: GCC 12 reports a false -Wrestrict on those.
  std::string line = "record,";
  line.append(std::to_string(r.seq)).append(",").append(FormatUtcMillis(r.time_ms));
  line.append(",").append(std::to_string(r.time_ms));
  for (const std::string* s : {&r.actor, &r.role, &r.source, &r.request_id, &r.action, &r.target, &r.model,
                               &r.model_digest, &r.outcome}) {
    line.append(",").append(CsvField(*s));
  }
  for (int64_t v : {r.http_status, r.prompt_tokens, r.completion_tokens, r.ttft_us, r.total_us}) {
    line.append(",").append(std::to_string(v));
  }
  line.append(",").append(CsvField(nlohmann::json(r.policy).dump()));
  for (const std::string* s : {&r.request_sha256, &r.response_sha256, &r.detail, &r.content_sha256}) {
    line.append(",").append(CsvField(*s));
  }
  line.append(",").append(std::to_string(r.version));
  line.append(",").append(CsvField(r.backend)).append(",").append(CsvField(r.route_decision));
  line.append(",").append(std::to_string(r.attempts));
  line.append(",").append(CsvField(r.client_request_id));
  // Empty for a record that ends no stream: a leading '-' would read as a formula.
  line.append(",");
  if (r.start_seq != kNoStartSeq) line.append(std::to_string(r.start_seq));
  line.append(",").append(ToHex(leaf)).append(",,,,,\n");
  out << line;
}

void WriteCsvHead(const SignedTreeHead& h, std::ostream& out) {
  out << "signed_head,," << FormatUtcMillis(h.timestamp_ms) << std::string(28, ',') << h.tree_size << ','
      << h.timestamp_ms << ',' << ToHex(h.root_hash) << ',' << ToHex(h.key_id) << ','
      << ToHex(std::span<const uint8_t>(h.signature)) << '\n';
}

}  // namespace

std::string CsvField(std::string_view value) {
  // A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...)
  // sends data away); OWASP's rule: a single quote in front makes it text, and the field is
  // quoted. The quote is visible in the cell, so a reader can tell the value was neutralised.
  // A cell starts at the field's start and, where the reader's list separator is ';' (much of
  // Europe), after every ';' too: such a reader splits a comma-separated line at ';' whatever
  // the quotes, so "x;=cmd|..." would put =cmd|... in a cell of its own.
  constexpr std::string_view kFormulaStart = "=+-@\t\r";
  std::string out = "\"";
  bool changed = false, cell_start = true;
  for (char c : value) {
    if (cell_start && kFormulaStart.find(c) != std::string_view::npos) {
      out.push_back('\'');
      changed = true;
    }
    if (c == '"') out.push_back('"');
    out.push_back(c);
    cell_start = c == ';';
  }
  if (!changed && value.find_first_of(",\";\r\n") == std::string_view::npos) return std::string(value);
  out.push_back('"');
  return out;
}

namespace {

// The records an export selects, complete and in rising order whatever the query says.
RecordQuery ExportQuery(const ExportOptions& options) {
  RecordQuery q = options.records;
  q.from_seq = 0;
  q.to_seq = std::numeric_limits<int64_t>::max();
  q.newest_first = false;
  q.limit = 0;
  return q;
}

// Whether a filter other than the time range narrows the export (the bundle's header says so:
// its records are then not every record of the range).
bool Filtered(const RecordQuery& q) {
  return !q.actor.empty() || !q.action.empty() || !q.outcome.empty() || !q.model.empty() || !q.request_id.empty() ||
         !q.client_request_id.empty() || q.actor_in.has_value() || !q.contains.empty();
}

std::string DumpLine(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The bundle, streamed: one query counts the range and finds its last record, which fixes
// the head that covers it (the first line needs the count); then each record is read, checked
// against its stored leaf hash and written with its path, one at a time. Memory stays bounded
// whatever the range (stored_tree_prover.h).
Result<ExportSummary> ExportBundle(AuditStore& store, const ExportOptions& options, std::ostream& out) {
  ExportSummary summary;
  // Only records a signed head already covers: those committed after the newest head (while
  // the export runs, say) are left for a later export rather than shipped unproven.
  RecordQuery q = ExportQuery(options);
  KIMI_ASSIGN_OR_RETURN(q.to_seq, store.LargestHeadSize());
  KIMI_ASSIGN_OR_RETURN(RecordRangeSummary range, store.SummarizeRecords(q));
  std::optional<SignedTreeHead> cover;
  if (range.last_seq) {
    KIMI_RETURN_IF_ERROR(store.ScanHeadsAbove(*range.last_seq, [&](const SignedTreeHead& h) {
      cover = h;
      return false;
    }));
    if (!cover) return Status::Corruption("no signed head covers record " + std::to_string(*range.last_seq));
  }
  out << DumpLine({{"type", "export"},
                   {"format", kExportBundleFormat},
                   {"since_ms", q.since_ms},
                   {"until_ms", q.until_ms},
                   {"filtered", Filtered(q)},
                   {"records", cover ? range.count : 0}});
  if (cover) {
    StoredTreeProver prover(store, cover->tree_size);
    KIMI_RETURN_IF_ERROR(store.ScanRecords(q, [&](StoredRecord& row) -> Status {
      const AuditRecord& r = row.record;
      // A row that disagrees with its stored leaf hash stops the export (verify the log first).
      const Hash leaf = HashLeaf(CanonicalRecordBytes(r));
      if (!row.decode_error.ok() || row.leaf_hash != AsBytes(leaf)) {
        return Status::Corruption("record " + std::to_string(r.seq) + " fails verification; run audit verify");
      }
      KIMI_ASSIGN_OR_RETURN(std::vector<Hash> path, prover.InclusionPath(r.seq));
      nlohmann::json j = RecordToJson(r);
      j["type"] = "record";
      j["leaf_hash"] = ToHex(leaf);
      nlohmann::json hex_path = nlohmann::json::array();
      for (const Hash& h : path) hex_path.push_back(ToHex(h));
      j["inclusion"] = {{"tree_size", cover->tree_size}, {"path", std::move(hex_path)}};
      out << DumpLine(j);
      ++summary.records;
      return out ? Status::OK() : Status::IOError("cannot write the export");
    }));
    if (summary.records != range.count) {
      return Status::FailedPrecondition("the log changed while it was exported; export again");
    }
    nlohmann::json head = TreeHeadToJson(*cover);
    head["type"] = "signed_head";
    out << DumpLine(head);
    summary.heads = 1;
    summary.fully_covered = true;
  }
  out.flush();
  if (!out) return Status::IOError("cannot write the export");
  return summary;
}

}  // namespace

Result<ExportSummary> ExportAuditLog(AuditStore& store, const ExportOptions& options, std::ostream& out) {
  if (options.with_proofs) {
    if (options.format != ExportFormat::kJsonl) return Status::InvalidArgument("a bundle with proofs is JSON lines");
    return ExportBundle(store, options, out);
  }
  ExportSummary summary;
  std::optional<uint64_t> first_seq;
  uint64_t last_seq = 0;
  if (options.format == ExportFormat::kCsv) out << kCsvHeader << '\n';
  const RecordQuery q = ExportQuery(options);
  KIMI_RETURN_IF_ERROR(store.ScanRecords(q, [&](StoredRecord& row) {
    const AuditRecord& r = row.record;
    const Hash leaf = HashLeaf(CanonicalRecordBytes(r));
    if (!first_seq) first_seq = r.seq;
    last_seq = r.seq;
    ++summary.records;
    if (options.format == ExportFormat::kCsv) {
      WriteCsvRecord(r, leaf, out);
    } else {
      nlohmann::json j = RecordToJson(r);
      j["type"] = "record";
      j["leaf_hash"] = ToHex(leaf);
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    return out ? Status::OK() : Status::IOError("cannot write the export");
  }));
  if (first_seq) {
    KIMI_RETURN_IF_ERROR(store.ScanHeadsAbove(*first_seq, [&](const SignedTreeHead& h) {
      if (options.format == ExportFormat::kCsv) {
        WriteCsvHead(h, out);
      } else {
        nlohmann::json j = TreeHeadToJson(h);
        j["type"] = "signed_head";
        out << j.dump() << '\n';
      }
      ++summary.heads;
      summary.fully_covered = h.tree_size > last_seq;
      return !summary.fully_covered;
    }));
  }
  out.flush();
  if (!out) return Status::IOError("cannot write the export");
  return summary;
}

}  // namespace kimi::audit
