#include "audit/log_verifier.h"

#include <algorithm>
#include <cstring>

#include "audit/compact_tree.h"
#include "audit/merkle.h"

namespace kimi::audit {
namespace {

struct Finding {
  uint64_t seq;
  std::string what;
};

class Findings {
 public:
  void Add(uint64_t seq, std::string what) { list_.push_back({seq, std::move(what)}); }
  void Fill(VerifyReport* report) const {
    for (const Finding& f : list_) {
      report->problems.push_back("seq " + std::to_string(f.seq) + ": " + f.what);
      if (!report->first_bad_seq || f.seq < *report->first_bad_seq) report->first_bad_seq = f.seq;
    }
  }
  bool empty() const { return list_.empty(); }
  std::optional<uint64_t> FirstAtOrAfter(uint64_t lo) const {
    std::optional<uint64_t> best;
    for (const Finding& f : list_) {
      if (f.seq >= lo && (!best || f.seq < *best)) best = f.seq;
    }
    return best;
  }

 private:
  std::vector<Finding> list_;
};

// Checks one row and returns its recomputed leaf hash.
Hash CheckRow(const StoredRecord& row, Findings* findings) {
  const uint64_t seq = static_cast<uint64_t>(row.seq);
  if (!row.decode_error.ok()) findings->Add(seq, "record row is malformed: " + row.decode_error.message());
  const Hash leaf = HashLeaf(CanonicalRecordBytes(row.record));
  if (row.leaf_hash.size() != kHashSize || std::memcmp(row.leaf_hash.data(), leaf.data(), kHashSize) != 0) {
    if (row.decode_error.ok()) findings->Add(seq, "record fields do not match the leaf hash written with them");
  }
  if (row.record.content.has_value() &&
      ToHex(Sha256(CanonicalContentBytes(*row.record.content))) != row.record.content_sha256) {
    findings->Add(seq, "stored content does not match the record's content_sha256");
  }
  return leaf;
}

}  // namespace

Result<VerifyReport> VerifyAuditLog(AuditStore& store, const PublicKey& key,
                                    std::span<const SignedTreeHead> kept_heads) {
  VerifyReport report;
  Findings findings;

  // 1. Rows: dense sequence numbers, strict decoding, leaf hashes.
  std::vector<Hash> leaves;
  bool gap = false;
  KIMI_RETURN_IF_ERROR(store.ScanRecords(RecordQuery{}, [&](StoredRecord& row) {
    ++report.records;
    if (gap) return Status::OK();
    if (row.seq < 0 || static_cast<uint64_t>(row.seq) != leaves.size()) {
      findings.Add(leaves.size(), "record is missing (rows jump to seq " + std::to_string(row.seq) +
                                      "): deleted or renumbered");
      gap = true;  // later rows cannot be placed in the tree
      return Status::OK();
    }
    leaves.push_back(CheckRow(row, &findings));
    return Status::OK();
  }));

  // 2. Signed heads, checked in order of size against one incremental tree.
  KIMI_ASSIGN_OR_RETURN(std::vector<SignedTreeHead> heads, store.ReadHeads());
  const size_t stored_heads = heads.size();
  heads.insert(heads.end(), kept_heads.begin(), kept_heads.end());
  report.heads = heads.size();
  std::vector<size_t> order(heads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return heads[a].tree_size < heads[b].tree_size; });
  CompactTree tree;
  uint64_t last_good = 0;
  for (size_t i : order) {
    const SignedTreeHead& h = heads[i];
    const std::string name = (i < stored_heads ? "signed head #" + std::to_string(i + 1) : std::string("kept signed head")) +
                             " (size " + std::to_string(h.tree_size) + ")";
    if (Status s = VerifyTreeHead(h, key); !s.ok()) {
      findings.Add(last_good, name + " is forged: " + s.message());
      continue;
    }
    if (h.tree_size > leaves.size()) {
      findings.Add(leaves.size(), name + " covers more records than the database holds: rows deleted");
      continue;
    }
    while (tree.size() < h.tree_size) tree.AppendLeafHash(leaves[tree.size()]);
    if (tree.Root() != h.root_hash) {
      const std::optional<uint64_t> located = findings.FirstAtOrAfter(last_good);
      if (!located || *located >= h.tree_size) {
        findings.Add(last_good, name + " does not match the records in [" + std::to_string(last_good) + ", " +
                                    std::to_string(h.tree_size) + "): rows rewritten with their leaf hashes");
      }
      continue;
    }
    last_good = std::max(last_good, h.tree_size);
  }
  report.covered_size = last_good;

  // 3. Rows after the last head: only the writer's stored tree speaks for them.
  if (!gap) {
    KIMI_ASSIGN_OR_RETURN(std::optional<CompactTree> stored, store.ReadStoredTree());
    const uint64_t stored_size = stored ? stored->size() : 0;
    if (stored_size != leaves.size()) {
      findings.Add(std::min<uint64_t>(stored_size, leaves.size()),
                   "the writer's tree holds " + std::to_string(stored_size) + " records but the table holds " +
                       std::to_string(leaves.size()) + ": rows deleted or added outside the writer");
    } else if (stored && TreeRoot(leaves) != stored->Root()) {
      if (!findings.FirstAtOrAfter(last_good)) {
        findings.Add(last_good, "records after the last good signed head do not match the writer's tree");
      }
    }
  }
  if (leaves.size() > last_good) {
    report.notes.push_back(std::to_string(leaves.size() - last_good) +
                           " record(s) after the last signed head (size " + std::to_string(last_good) +
                           ") are not yet covered by a signature");
  }
  if (heads.empty()) report.notes.push_back("no signed head in the database");
  findings.Fill(&report);
  return report;
}

Result<std::vector<Hash>> RecomputeLeafHashes(AuditStore& store, uint64_t size) {
  std::vector<Hash> leaves;
  leaves.reserve(size);
  RecordQuery q;
  q.to_seq = size;
  q.with_content = false;
  KIMI_RETURN_IF_ERROR(store.ScanRecords(q, [&](StoredRecord& row) -> Status {
    if (static_cast<uint64_t>(row.seq) != leaves.size()) {
      return Status::Corruption("record " + std::to_string(leaves.size()) + " is missing");
    }
    Findings findings;
    leaves.push_back(CheckRow(row, &findings));
    if (!findings.empty()) {
      return Status::Corruption("record " + std::to_string(row.seq) + " fails verification; run audit verify");
    }
    return Status::OK();
  }));
  if (leaves.size() != size) {
    return Status::NotFound("the log holds " + std::to_string(leaves.size()) + " records, fewer than " +
                            std::to_string(size));
  }
  return leaves;
}

}  // namespace kimi::audit
