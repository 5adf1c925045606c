#include "audit/export_verifier.h"

#include <algorithm>
#include <map>

#include "audit/hash.h"
#include "audit/log_export.h"
#include "audit/merkle.h"
#include "audit/record.h"
#include "audit/stream_links.h"
#include "audit/time_order.h"
#include "kimi/untrusted_json.h"

namespace kimi::audit {
namespace {

struct BundleRecord {
  uint64_t seq = 0;
  int64_t time_ms = 0;
  Hash leaf{};
  uint64_t tree_size = 0;
  std::vector<Hash> path;
  StreamLink link;
};

class Problems {
 public:
  explicit Problems(BundleReport* report) : report_(report) {}
  void Add(std::optional<uint64_t> seq, const std::string& what) {
    report_->problems.push_back(seq ? "record " + std::to_string(*seq) + ": " + what : what);
    if (seq && (!report_->first_bad_seq || *seq < *report_->first_bad_seq)) report_->first_bad_seq = seq;
  }

 private:
  BundleReport* report_;
};

Result<std::vector<Hash>> HashesFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return Status::InvalidArgument("inclusion path is not an array");
  std::vector<Hash> out;
  for (const auto& e : j) {
    if (!e.is_string()) return Status::InvalidArgument("inclusion path entry is not a string");
    KIMI_ASSIGN_OR_RETURN(Hash h, HashFromHex(e.get<std::string>()));
    out.push_back(h);
  }
  return out;
}

// The record's leaf and proof, or why the line is not a valid record.
Result<BundleRecord> CheckRecordLine(const nlohmann::json& j) {
  KIMI_ASSIGN_OR_RETURN(AuditRecord r, RecordFromJson(j));
  BundleRecord out;
  out.seq = r.seq;
  out.time_ms = r.time_ms;
  out.link = StreamLink::Of(r);
  out.leaf = HashLeaf(CanonicalRecordBytes(r));
  if (!j.contains("leaf_hash") || !j["leaf_hash"].is_string()) return Status::InvalidArgument("no leaf_hash");
  KIMI_ASSIGN_OR_RETURN(Hash claimed, HashFromHex(j["leaf_hash"].get<std::string>()));
  if (claimed != out.leaf) return Status::Corruption("its fields do not hash to its leaf_hash");
  if (r.content && ToHex(Sha256(CanonicalContentBytes(*r.content))) != r.content_sha256) {
    return Status::Corruption("its content does not hash to its content_sha256");
  }
  const auto inclusion = j.find("inclusion");
  if (inclusion == j.end() || !inclusion->is_object() || !inclusion->contains("tree_size") ||
      !(*inclusion)["tree_size"].is_number_unsigned() || !inclusion->contains("path")) {
    return Status::InvalidArgument("no inclusion proof");
  }
  out.tree_size = (*inclusion)["tree_size"].get<uint64_t>();
  KIMI_ASSIGN_OR_RETURN(out.path, HashesFromJson((*inclusion)["path"]));
  return out;
}

}  // namespace

Result<BundleReport> VerifyExportBundle(std::istream& in, const PublicKey& key) {
  BundleReport report;
  Problems problems(&report);
  std::vector<BundleRecord> records;
  std::map<uint64_t, Hash> good_roots;  // tree size -> root of a head whose signature verifies
  std::optional<uint64_t> previous_seq;
  TimeOrder times;
  StreamLinks links;  // a bundle holds no records before its range: links to them are trusted
  bool header = false;
  std::string line;
  for (uint64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    // A line that is not JSON, or nests too deeply to be any line the appliance writes, is read
    // as an empty value: the header check or "neither a record nor a signed head" names it.
    Result<nlohmann::json> parsed = ParseUntrustedJson(line, "line");
    const nlohmann::json j = parsed.ok() ? std::move(*parsed) : nlohmann::json();
    const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
    if (!header) {
      if (type != "export" || !j.contains("format") || !j["format"].is_number_integer()) {
        return Status::InvalidArgument("line 1 is not an export bundle header (export with proofs)");
      }
      if (j["format"].get<int64_t>() != kExportBundleFormat) {
        return Status::InvalidArgument("bundle format " + j["format"].dump() + " is not known");
      }
      header = true;
      continue;
    }
    if (type == "record") {
      ++report.records;
      Result<BundleRecord> r = CheckRecordLine(j);
      const std::optional<uint64_t> seq =
          j.contains("seq") && j["seq"].is_number_unsigned() ? std::optional(j["seq"].get<uint64_t>()) : std::nullopt;
      if (!r.ok()) {
        problems.Add(seq, r.status().message());
        continue;
      }
      if (previous_seq && r->seq <= *previous_seq) problems.Add(r->seq, "sequence numbers do not rise");
      if (std::optional<std::string> backwards = times.Next(r->time_ms)) problems.Add(r->seq, *backwards);
      if (Result<std::optional<std::string>> unlinked = links.Next(r->link); unlinked.ok() && *unlinked) {
        problems.Add(r->seq, **unlinked);
      }
      previous_seq = r->seq;
      records.push_back(std::move(*r));
    } else if (type == "signed_head") {
      ++report.heads;
      Result<SignedTreeHead> head = TreeHeadFromJson(j);
      if (!head.ok()) {
        problems.Add(std::nullopt, "line " + std::to_string(line_no) + ": " + head.status().message());
        continue;
      }
      if (Status s = VerifyTreeHead(*head, key); !s.ok()) {
        problems.Add(std::nullopt, "signed head of size " + std::to_string(head->tree_size) + ": " + s.message());
        continue;
      }
      good_roots[head->tree_size] = head->root_hash;
    } else {
      problems.Add(std::nullopt, "line " + std::to_string(line_no) + " is neither a record nor a signed head");
    }
  }
  if (!header) return Status::InvalidArgument("empty input is not an export bundle");
  for (const BundleRecord& r : records) {
    const auto root = good_roots.find(r.tree_size);
    if (root == good_roots.end()) {
      problems.Add(r.seq, "no good signed head of tree size " + std::to_string(r.tree_size) + " in the bundle");
      continue;
    }
    if (Status s = VerifyInclusion(r.seq, r.tree_size, r.leaf, r.path, root->second); !s.ok()) {
      problems.Add(r.seq, "inclusion proof fails: " + s.message());
    }
  }
  return report;
}

}  // namespace kimi::audit
