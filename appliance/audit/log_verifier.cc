#include "audit/log_verifier.h"

#include <algorithm>
#include <cstring>

#include "audit/compact_tree.h"
#include "audit/merkle.h"
#include "audit/stream_links.h"
#include "audit/time_order.h"
#include "audit/writer_state.h"

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

// Ends the read snapshot on every way out.
class SnapshotScope {
 public:
  explicit SnapshotScope(AuditStore* store) : store_(store) {}
  ~SnapshotScope() { (void)store_->EndSnapshot(); }
  SnapshotScope(const SnapshotScope&) = delete;
  SnapshotScope& operator=(const SnapshotScope&) = delete;

 private:
  AuditStore* store_;
};

// The writer state's rules (writer_state.h). rows: the records in the table.
Status CheckWriterState(AuditStore& store, const PublicKey& key, uint64_t rows, Findings* findings,
                        VerifyReport* report) {
  KIMI_ASSIGN_OR_RETURN(std::optional<WriterState> state, store.ReadWriterState());
  KIMI_ASSIGN_OR_RETURN(uint64_t head_count, store.HeadCount());
  KIMI_ASSIGN_OR_RETURN(uint64_t largest, store.LargestHeadSize());
  // Past the last head, only a genuine open state (the writer was running, then crashed) speaks
  // for rows: after a clean stop, or with no state the appliance signed, they are foreign.
  bool open = false;
  if (!state) {
    if (rows > 0 || head_count > 0) {
      report->notes.push_back("no writer state in the database: rows past the last signed head are not trusted");
    }
  } else if (Status s = VerifyWriterState(*state, key); !s.ok()) {
    findings->Add(std::min(largest, rows), "the writer state is forged: " + s.message());
    return Status::OK();
  } else if (state->heads != head_count || state->head_size != largest) {
    findings->Add(std::min(state->head_size, largest),
                  "the writer state counts " + std::to_string(state->heads) + " signed head(s) up to size " +
                      std::to_string(state->head_size) + " but the database holds " + std::to_string(head_count) +
                      " up to size " + std::to_string(largest) + ": heads deleted or added, or an older state put back");
    return Status::OK();
  } else {
    open = !state->clean;
  }
  if (!open && rows > largest) {
    findings->Add(largest, "record after the last signed head (size " + std::to_string(largest) + ")" +
                               (state ? std::string(" of a clean stop") : std::string()) +
                               ": not written by this appliance");
  }
  return Status::OK();
}

}  // namespace

Result<VerifyReport> VerifyAuditLog(AuditStore& store, const PublicKey& key,
                                    std::span<const SignedTreeHead> kept_heads) {
  VerifyOptions options;
  options.kept_heads = kept_heads;
  return VerifyAuditLog(store, key, options);
}

Result<VerifyReport> VerifyAuditLog(AuditStore& store, const PublicKey& key, const VerifyOptions& options) {
  VerifyReport report;
  Findings findings;
  KIMI_RETURN_IF_ERROR(store.BeginSnapshot());
  SnapshotScope snapshot(&store);
  const uint64_t base = options.from ? options.from->size() : 0;

  // 1. Rows: dense sequence numbers, strict decoding, leaf hashes, time order, stream links.
  TimeOrder times;
  StreamLinks links([&store](uint64_t seq) -> Result<std::optional<StreamLink>> {
    KIMI_ASSIGN_OR_RETURN(std::optional<StoredRecord> row, store.ReadRecord(seq));
    if (!row) return std::optional<StreamLink>();
    return std::optional<StreamLink>(StreamLink::Of(row->record));
  });
  if (base > 0) {
    KIMI_ASSIGN_OR_RETURN(std::optional<StoredRecord> before, store.ReadRecord(base - 1));
    if (!before) {
      findings.Add(base - 1, "record below the verified checkpoint is missing: deleted");
    } else {
      times = TimeOrder(before->record.time_ms);
    }
    KIMI_ASSIGN_OR_RETURN(std::optional<uint64_t> missing, store.FirstMissingSeq());
    if (missing && *missing < base) findings.Add(*missing, "record is missing: deleted or renumbered");
  }
  std::vector<Hash> leaves;  // of the rows [base, base + size)
  bool gap = false;
  RecordQuery query;
  query.from_seq = base;
  KIMI_RETURN_IF_ERROR(store.ScanRecords(query, [&](StoredRecord& row) -> Status {
    if (options.cancelled && options.cancelled()) return Status::Cancelled("audit log verification cancelled");
    ++report.records;
    if (gap) return Status::OK();
    const uint64_t expected = base + leaves.size();
    if (row.seq < 0 || static_cast<uint64_t>(row.seq) != expected) {
      findings.Add(expected, "record is missing (rows jump to seq " + std::to_string(row.seq) +
                                 "): deleted or renumbered");
      gap = true;  // later rows cannot be placed in the tree
      return Status::OK();
    }
    leaves.push_back(CheckRow(row, &findings));
    if (std::optional<std::string> backwards = times.Next(row.record.time_ms)) findings.Add(expected, *backwards);
    KIMI_ASSIGN_OR_RETURN(std::optional<std::string> unlinked, links.Next(StreamLink::Of(row.record)));
    if (unlinked) findings.Add(expected, *unlinked);
    return Status::OK();
  }));
  report.last_time_ms = times.previous();
  const uint64_t rows = base + leaves.size();

  // 2. Signed heads, checked in order of size against one incremental tree.
  std::vector<SignedTreeHead> heads;
  if (base == 0) {
    KIMI_ASSIGN_OR_RETURN(heads, store.ReadHeads());
  } else {
    KIMI_RETURN_IF_ERROR(store.ScanHeadsAbove(base - 1, [&](const SignedTreeHead& h) {
      heads.push_back(h);
      return true;
    }));
  }
  const size_t stored_heads = heads.size();
  heads.insert(heads.end(), options.kept_heads.begin(), options.kept_heads.end());
  report.heads = heads.size();
  std::vector<size_t> order(heads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return heads[a].tree_size < heads[b].tree_size; });
  CompactTree tree = options.from ? *options.from : CompactTree();
  uint64_t last_good = base;
  for (size_t i : order) {
    const SignedTreeHead& h = heads[i];
    const std::string name = (i < stored_heads ? "signed head #" + std::to_string(i + 1) : std::string("kept signed head")) +
                             " (size " + std::to_string(h.tree_size) + ")";
    if (Status s = VerifyTreeHead(h, key); !s.ok()) {
      findings.Add(last_good, name + " is forged: " + s.message());
      continue;
    }
    if (h.tree_size < base) continue;  // below the checkpoint: verified at an earlier start
    if (h.tree_size > rows) {
      findings.Add(rows, name + " covers more records than the database holds: rows deleted");
      continue;
    }
    while (tree.size() < h.tree_size) tree.AppendLeafHash(leaves[tree.size() - base]);
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

  // 3. Rows after the last head: only the writer's stored tree and state speak for them.
  if (!gap) {
    KIMI_ASSIGN_OR_RETURN(std::optional<CompactTree> stored, store.ReadStoredTree());
    const uint64_t stored_size = stored ? stored->size() : 0;
    while (tree.size() < rows) tree.AppendLeafHash(leaves[tree.size() - base]);
    if (stored_size != rows) {
      findings.Add(std::min<uint64_t>(stored_size, rows),
                   "the writer's tree holds " + std::to_string(stored_size) + " records but the table holds " +
                       std::to_string(rows) + ": rows deleted or added outside the writer");
    } else if (stored && tree.Root() != stored->Root()) {
      if (!findings.FirstAtOrAfter(last_good)) {
        findings.Add(last_good, "records after the last good signed head do not match the writer's tree");
      }
    }
  }
  KIMI_RETURN_IF_ERROR(CheckWriterState(store, key, rows, &findings, &report));
  if (rows > last_good) {
    report.notes.push_back(std::to_string(rows - last_good) + " record(s) after the last signed head (size " +
                           std::to_string(last_good) + ") are not yet covered by a signature");
  }
  if (heads.empty() && base == 0) report.notes.push_back("no signed head in the database");
  findings.Fill(&report);
  return report;
}

std::string DescribeFailure(const VerifyReport& report) {
  if (report.ok() || !report.first_bad_seq) return "verifies";
  const std::string prefix = "seq " + std::to_string(*report.first_bad_seq) + ": ";
  std::string first = report.problems.front();
  for (const std::string& p : report.problems) {
    if (p.rfind(prefix, 0) == 0) {
      first = p.substr(prefix.size());
      break;
    }
  }
  return "seq " + std::to_string(*report.first_bad_seq) + " (" + first + "); " +
         std::to_string(report.problems.size()) + " problem(s), `kimictl audit verify` lists them";
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
