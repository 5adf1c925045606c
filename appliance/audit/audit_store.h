// AuditStore: the audit log's own SQLite database (audit.db), apart from the appliance's main
// database so that its one writer thread, WAL and synchronous=FULL never contend with
// anything else.
//
// Owns one SQLite connection. Tables: audit_records (one row a record, columns as in
// record.h, plus the leaf hash the writer computed; a writable store adds the columns of
// later record format versions to an older database), audit_content (purgeable text),
// audit_heads (signed tree heads), audit_tree (the writer's compact tree: size and edge),
// audit_writer_state (the writer's signed state, writer_state.h),
// audit_open_streams (the seq of every stream start record that has no end record yet).
// Rows are decoded strictly (a column of the wrong type is reported, not coerced) so that the
// verifier can tell an edited row from an intact one.
// Public header of audit/: other folders include it.
// Thread safety: none. The audit sink's writer thread is the only user of a writable store;
// readers (verify, prove, export) open their own read-only store.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audit/compact_tree.h"
#include "audit/record.h"
#include "audit/signed_head.h"
#include "audit/writer_state.h"
#include "kimi/status.h"
#include "store/sql_statement.h"

struct sqlite3;

namespace kimi::audit {

struct AuditStoreOptions {
  bool read_only = false;
  int busy_timeout_ms = 5000;
  // SQLite's max_page_count; 0 leaves SQLite's default. Tests use a small value to make the
  // database "full" on purpose.
  int64_t max_page_count = 0;
};

// A record as read back. `decode_error` is not OK when a column had the wrong type or the
// policy column is not the canonical encoding of a string array; `record` is then partial.
struct StoredRecord {
  int64_t seq = 0;
  AuditRecord record;
  Status decode_error;
  std::string leaf_hash;  // as stored; 32 bytes when intact
};

struct RecordQuery {
  uint64_t from_seq = 0;
  uint64_t to_seq = std::numeric_limits<int64_t>::max();  // exclusive
  int64_t since_ms = std::numeric_limits<int64_t>::min();  // inclusive
  int64_t until_ms = std::numeric_limits<int64_t>::max();  // exclusive
  bool with_content = true;
  // Exact-match filters for the auditors' search; empty matches everything.
  std::string actor;
  std::string action;
  std::string outcome;
  std::string model;
  std::string request_id;
  std::string client_request_id;  // the X-Request-Id a client sent (record format 3)
  // Records whose actor is one of these (the keys a key name or owner names); nullopt: any
  // actor, an empty list: none.
  std::optional<std::vector<std::string>> actor_in;
  // Partial match: records where `contains` is a substring (ASCII case-insensitive, % and _
  // taken literally) of the actor, request id, client request id or target, or whose actor
  // is one of contains_actors (the keys whose name or owner contains it). No index serves
  // it: callers bound the seq range they scan (from_seq..to_seq). Empty: no such filter.
  std::string contains;
  std::vector<std::string> contains_actors;
  bool newest_first = false;  // descending seq (hence time) order instead of ascending
  uint64_t limit = 0;  // rows at most; 0: no limit
};

// What SummarizeRecords found: how many records match and the highest seq among them.
struct RecordRangeSummary {
  uint64_t count = 0;
  std::optional<uint64_t> last_seq;  // nullopt when none matches
};

// A record about to be written, with its leaf hash (computed by the writer).
struct PendingRow {
  const AuditRecord* record = nullptr;
  Hash leaf_hash{};
};

class AuditStore {
 public:
  static Result<std::unique_ptr<AuditStore>> Open(const std::string& path, const AuditStoreOptions& options);
  ~AuditStore();
  AuditStore(const AuditStore&) = delete;
  AuditStore& operator=(const AuditStore&) = delete;

  // The writer's compact tree; an empty tree for a new database. Corruption when the stored
  // tree does not match the number of records.
  Result<CompactTree> LoadTree();

  // Writes the rows and the tree after them in one transaction (BEGIN IMMEDIATE ... COMMIT);
  // nothing is written when it fails. A row with outcome kOutcomeStreamStarted is added to the
  // open streams, a row with a start_seq removes that stream from them, in the same
  // transaction: the open streams are always those the log shows started and not ended.
  Status AppendBatch(std::span<const PendingRow> rows, const CompactTree& tree_after);
  // Pages in the write-ahead log as of the last commit. A writable store turns SQLite's
  // automatic checkpoint off: that one runs inside the COMMIT that crosses its threshold, so
  // the commit would be acknowledged only after the pages were copied into the database and
  // synced. The writer calls CheckpointWal after acknowledging its commit instead.
  int WalPages() const { return wal_pages_; }
  // Copies the log's pages into the database as far as no reader still needs them (SQLite's
  // PASSIVE checkpoint: never waits for a reader or blocks one). A committed transaction is
  // durable in the log before this runs; this only keeps the log from growing.
  Status CheckpointWal();
  // Stores the head and, when given, replaces the writer state with *state in the same
  // transaction.
  Status InsertHead(const SignedTreeHead& head, const WriterState* state = nullptr);
  // Replaces the writer state (at a start, before any record is appended).
  Status WriteWriterState(const WriterState& state);
  // The stored writer state; nullopt when none was written (a new database, or one made before
  // the table existed).
  Result<std::optional<WriterState>> ReadWriterState();
  // Number of stored signed heads.
  Result<uint64_t> HeadCount();
  // The seq of every stream start record without an end record, in order. Reads only the
  // open streams' table (as many rows as streams were open), never the log. Writable stores.
  Result<std::vector<uint64_t>> OpenStreams();
  // Whether a record ends the stream that starts at `start_seq` (its start_seq names it).
  // Scans the log: for the few streams open at a start.
  Result<bool> HasStreamEnd(uint64_t start_seq);
  // Deletes stored content of records older than cutoff_ms; returns how many were purged.
  Result<int64_t> PurgeContentBefore(int64_t cutoff_ms);

  // Calls visit for each record matching the query, in sequence order (descending when
  // newest_first); stops at the first error visit returns. Each exact-match filter (actor, action, outcome, model, request_id,
  // client_request_id) has an index whose entries are in sequence order, so a filtered page reads only its rows.
  Status ScanRecords(const RecordQuery& query, const std::function<Status(StoredRecord&)>& visit);
  // SQLite's plan for ScanRecords(query) (EXPLAIN QUERY PLAN), one step a line; tests check
  // that every filter is served by an index.
  Result<std::string> ExplainScan(const RecordQuery& query);
  // How many records match the query (its limit ignored) and the last one's seq.
  Result<RecordRangeSummary> SummarizeRecords(const RecordQuery& query);
  // Calls visit with the stored leaf hash of every seq in [from, to), in order. Corruption
  // when a seq in the range has no row or its leaf hash is not 32 bytes.
  Status ScanLeafHashes(uint64_t from, uint64_t to, const std::function<void(const Hash&)>& visit);
  Result<std::optional<StoredRecord>> ReadRecord(uint64_t seq);
  // Every signed head, in insertion order.
  Result<std::vector<SignedTreeHead>> ReadHeads();
  // The signed heads with tree_size > above_size, smallest size first (equal sizes in
  // insertion order), until visit returns false. Reads one head at a time.
  Status ScanHeadsAbove(uint64_t above_size, const std::function<bool(const SignedTreeHead&)>& visit);
  // The largest tree size a stored head claims; 0 when none is stored.
  Result<uint64_t> LargestHeadSize();
  // Between BeginSnapshot() and EndSnapshot() every read of this connection sees the database
  // as it was at BeginSnapshot(), whatever the writer commits meanwhile (a read transaction;
  // under WAL it never blocks the writer). Lets an export be read twice with the same bytes.
  Status BeginSnapshot();
  Status EndSnapshot();
  // Number of rows and the highest seq + 1 (equal when dense).
  Result<uint64_t> RecordCount();
  // The highest stored seq + 1 (0 when empty), read from the end of the table: no scan.
  Result<uint64_t> NextSeq();
  // The distinct actions in the log, sorted; one index seek per action, not a scan.
  Result<std::vector<std::string>> DistinctActions();
  Result<std::optional<CompactTree>> ReadStoredTree();
  // The smallest seq with no row below the highest stored one; nullopt when the rows are dense.
  Result<std::optional<uint64_t>> FirstMissingSeq();

  // Runs SQL directly; for tests that tamper with the database.
  Status ExecForTest(const std::string& sql);

 private:
  explicit AuditStore(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  // Prepares *kept on first use (the statements of every batch: parsed once, not once per
  // transaction).
  Status Keep(store::SqlStatement* kept, const char* sql);
  // Runs a statement that returns no rows, kept prepared in *kept (BEGIN and COMMIT).
  Status RunKept(const char* sql, store::SqlStatement* kept);
  Status WriteRows(std::span<const PendingRow> rows, const CompactTree& tree_after);
  Status WriteHead(const SignedTreeHead& head);
  // Adds a stream start to the open streams, or removes the stream an end record ends.
  Status TrackStream(const AuditRecord& record);
  Result<bool> HasColumn(const char* table, const char* column);
  // The columns ScanRecords reads (DecodeRow's order).
  std::string ScanColumns() const;
  // The SELECT of ScanRecords and the texts it binds to ?5, ?6, ... in order.
  std::string ScanSql(const char* columns, const RecordQuery& query, std::vector<std::string>* bound) const;
  void BindScan(store::SqlStatement& st, const RecordQuery& query, const std::vector<std::string>& bound);
  // Brings a database made by an older record format up to the current one (adds columns
  // only; see kLaterColumns in the .cc).
  Status AddLaterColumns();
  // The SELECT expression of the i-th column added after version 1: the column, or the
  // constant an older database reads in its place.
  std::string LaterColumn(size_t i) const;

  sqlite3* db_;
  std::array<bool, 6> later_columns_present_{};  // of kLaterColumns; set by Open
  int wal_pages_ = 0;  // set by the WAL hook after each commit
  // Prepared once on first use by the writer; finalised in the destructor.
  store::SqlStatement insert_record_;
  store::SqlStatement insert_content_;
  store::SqlStatement upsert_tree_;
  store::SqlStatement begin_;
  store::SqlStatement commit_;
  store::SqlStatement open_stream_;
  store::SqlStatement close_stream_;
};

}  // namespace kimi::audit
