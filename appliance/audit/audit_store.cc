#include "audit/audit_store.h"

#include <sqlite3.h>

#include <array>
#include <cstring>
#include <iterator>
#include <tuple>

#include "audit/canonical_json.h"
#include "store/owner_only.h"

namespace kimi::audit {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS audit_records(
  seq INTEGER PRIMARY KEY NOT NULL,
  time_ms INTEGER NOT NULL,
  actor TEXT NOT NULL,
  role TEXT NOT NULL,
  source TEXT NOT NULL,
  request_id TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  model TEXT NOT NULL,
  model_digest TEXT NOT NULL,
  outcome TEXT NOT NULL,
  http_status INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  ttft_us INTEGER NOT NULL,
  total_us INTEGER NOT NULL,
  policy TEXT NOT NULL,
  request_sha256 TEXT NOT NULL,
  response_sha256 TEXT NOT NULL,
  detail TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  leaf_hash BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_records_time ON audit_records(time_ms);
-- The auditors' search filters. Each entry ends with the rowid (seq), so one filter's
-- matches come out of its index in sequence order: a page after a cursor reads its rows only.
-- Added in place to a database made before them (CREATE ... IF NOT EXISTS at every open).
CREATE INDEX IF NOT EXISTS audit_records_actor ON audit_records(actor);
CREATE INDEX IF NOT EXISTS audit_records_action ON audit_records(action);
CREATE INDEX IF NOT EXISTS audit_records_model ON audit_records(model);
CREATE INDEX IF NOT EXISTS audit_records_outcome ON audit_records(outcome);
CREATE INDEX IF NOT EXISTS audit_records_request_id ON audit_records(request_id);
CREATE TABLE IF NOT EXISTS audit_content(
  seq INTEGER PRIMARY KEY NOT NULL,
  prompt TEXT NOT NULL,
  completion TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_heads(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tree_size INTEGER NOT NULL,
  timestamp_ms INTEGER NOT NULL,
  root_hash BLOB NOT NULL,
  key_id BLOB NOT NULL,
  signature BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_tree(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  size INTEGER NOT NULL,
  edge BLOB NOT NULL
);
-- The writer's signed state (writer_state.h), replaced with each signed head.
CREATE TABLE IF NOT EXISTS audit_writer_state(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  heads INTEGER NOT NULL,
  head_size INTEGER NOT NULL,
  verified_size INTEGER NOT NULL,
  verified_root BLOB NOT NULL,
  timestamp_ms INTEGER NOT NULL,
  clean INTEGER NOT NULL,
  key_id BLOB NOT NULL,
  signature BLOB NOT NULL,
  verified_edge BLOB NOT NULL
);
-- The streams whose start record has no end record yet, kept by WriteRows in the transaction
-- of the record that starts or ends one (see OpenStreams in the header).
CREATE TABLE IF NOT EXISTS audit_open_streams(
  seq INTEGER PRIMARY KEY NOT NULL
);
)sql";

// Columns added after record format version 1, in the order the SELECTs read them, with what
// a database made before them reads in their place. A writable store adds the missing ones
// (rows already there keep their version, whose canonical bytes lack the new keys); a
// read-only store of an older database reads the constants.
struct AddedColumn {
  const char* name;
  const char* type;
  const char* absent;
};
constexpr AddedColumn kLaterColumns[] = {
    {"v", "INTEGER NOT NULL DEFAULT 1", "1"},
    {"backend", "TEXT NOT NULL DEFAULT ''", "''"},            // version 2
    {"route_decision", "TEXT NOT NULL DEFAULT ''", "''"},     // version 2
    {"attempts", "INTEGER NOT NULL DEFAULT 0", "0"},          // version 2
    {"client_request_id", "TEXT NOT NULL DEFAULT ''", "''"},  // version 3
    {"start_seq", "INTEGER NOT NULL DEFAULT -1", "-1"},       // version 4
};
constexpr size_t kClientRequestIdColumn = 4;  // in kLaterColumns

constexpr const char* kFirstColumns =
    "r.seq, r.time_ms, r.actor, r.role, r.source, r.request_id, r.action, r.target, r.model, r.model_digest, "
    "r.outcome, r.http_status, r.prompt_tokens, r.completion_tokens, r.ttft_us, r.total_us, r.policy, "
    "r.request_sha256, r.response_sha256, r.detail, r.content_sha256, r.leaf_hash";

// The search index of a later column, made once the column exists.
constexpr const char* kClientRequestIdIndex =
    "CREATE INDEX IF NOT EXISTS audit_records_client_request_id ON audit_records(client_request_id)";

using store::SqlStatement;
using store::SqlType;

// The audit log reports why it cannot write: a failure's code follows SQLite's cause.
constexpr store::SqlErrorCodes kCodes = store::SqlErrorCodes::kByCause;

// A failure of a call that runs no statement (open, checkpoint).
Status SqliteError(sqlite3* db, int rc, const std::string& what) {
  return store::SqlError(db, rc, "", kCodes).WithContext(what);
}

// The first row of a query that always returns one (an aggregate); `what` names it in errors.
Result<SqlStatement> QueryRow(sqlite3* db, const char* sql, const char* what) {
  SqlStatement st(db, sql, kCodes);
  Result<bool> row = st.Step();
  if (!row.ok()) return row.status().WithContext(what);
  if (!*row) return Status::IOError(std::string(what) + ": the query returned no row");
  return st;
}

// Strict column readers: a value of another storage class is an edited row, not something
// to convert.
class RowDecoder {
 public:
  explicit RowDecoder(const SqlStatement& st) : st_(st) {}
  void Text(int col, const char* name, std::string* out) {
    if (st_.Type(col) != SqlType::kText) return Fail(name, "text");
    *out = st_.Text(col);
  }
  void Int(int col, const char* name, int64_t* out) {
    if (st_.Type(col) != SqlType::kInteger) return Fail(name, "an integer");
    *out = st_.Int(col);
  }
  Status status() const { return status_; }

 private:
  void Fail(const char* name, const char* want) {
    if (status_.ok()) status_ = Status::Corruption(std::string("column ") + name + " is not " + want);
  }
  const SqlStatement& st_;
  Status status_;
};

// Copies a fixed-size blob; one of another length leaves zeros, which then fail the
// signature check.
template <size_t N>
void CopyBlob(const std::string& bytes, std::array<uint8_t, N>* out) {
  if (bytes.size() == N) std::memcpy(out->data(), bytes.data(), N);
}

void DecodePolicy(const std::string& text, AuditRecord* r, Status* error) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  bool ok = j.is_array();
  if (ok) {
    for (const auto& e : j) {
      if (!e.is_string()) {
        ok = false;
        break;
      }
      r->policy.push_back(e.get<std::string>());
    }
  }
  if (!ok || CanonicalStringArray(r->policy) != text) {
    if (error->ok()) *error = Status::Corruption("column policy is not a canonical JSON array of strings");
  }
}

// Reads one row of SELECT kFirstColumns, kLaterColumns, c.prompt, c.completion.
StoredRecord DecodeRow(const SqlStatement& st, bool with_content) {
  StoredRecord out;
  out.seq = st.Int(0);
  AuditRecord& r = out.record;
  r.seq = static_cast<uint64_t>(out.seq);
  RowDecoder d(st);
  std::string policy;
  d.Int(1, "time_ms", &r.time_ms);
  d.Text(2, "actor", &r.actor);
  d.Text(3, "role", &r.role);
  d.Text(4, "source", &r.source);
  d.Text(5, "request_id", &r.request_id);
  d.Text(6, "action", &r.action);
  d.Text(7, "target", &r.target);
  d.Text(8, "model", &r.model);
  d.Text(9, "model_digest", &r.model_digest);
  d.Text(10, "outcome", &r.outcome);
  d.Int(11, "http_status", &r.http_status);
  d.Int(12, "prompt_tokens", &r.prompt_tokens);
  d.Int(13, "completion_tokens", &r.completion_tokens);
  d.Int(14, "ttft_us", &r.ttft_us);
  d.Int(15, "total_us", &r.total_us);
  d.Text(16, "policy", &policy);
  d.Text(17, "request_sha256", &r.request_sha256);
  d.Text(18, "response_sha256", &r.response_sha256);
  d.Text(19, "detail", &r.detail);
  d.Text(20, "content_sha256", &r.content_sha256);
  out.leaf_hash = st.Blob(21);
  d.Int(22, "v", &r.version);
  d.Text(23, "backend", &r.backend);
  d.Text(24, "route_decision", &r.route_decision);
  d.Int(25, "attempts", &r.attempts);
  d.Text(26, "client_request_id", &r.client_request_id);
  d.Int(27, "start_seq", &r.start_seq);
  out.decode_error = d.status();
  if (out.decode_error.ok() && !IsKnownRecordVersion(r.version)) {
    out.decode_error = Status::Corruption("column v holds unknown record version " + std::to_string(r.version));
    r.version = kRecordFormatVersion;  // something CanonicalRecordBytes can encode
  }
  DecodePolicy(policy, &r, &out.decode_error);
  if (with_content && st.Type(28) != SqlType::kNull) {
    AuditContent c;
    RowDecoder cd(st);
    cd.Text(28, "prompt", &c.prompt);
    cd.Text(29, "completion", &c.completion);
    if (!cd.status().ok() && out.decode_error.ok()) out.decode_error = cd.status();
    r.content = std::move(c);
  }
  return out;
}

// Runs a SELECT of (tree_size, timestamp_ms, root_hash, key_id, signature), binding
// `parameter` to ?1 when it is not negative, until visit returns false.
Status VisitHeads(sqlite3* db, const char* sql, int64_t parameter,
                  const std::function<bool(const SignedTreeHead&)>& visit) {
  SqlStatement st(db, sql, kCodes);
  if (parameter >= 0) st.Bind(1, parameter);
  for (;;) {
    Result<bool> row = st.Step();
    if (!row.ok()) return row.status().WithContext("audit database: cannot read signed heads");
    if (!*row) return Status::OK();
    SignedTreeHead h;
    h.tree_size = static_cast<uint64_t>(st.Int(0));
    h.timestamp_ms = st.Int(1);
    CopyBlob(st.Blob(2), &h.root_hash);
    CopyBlob(st.Blob(3), &h.key_id);
    CopyBlob(st.Blob(4), &h.signature);
    if (!visit(h)) return Status::OK();
  }
}

}  // namespace

Result<std::unique_ptr<AuditStore>> AuditStore::Open(const std::string& path, const AuditStoreOptions& options) {
  // Created 0600 before SQLite sees it; its -wal and -shm files take the same mode.
  if (!options.read_only) KIMI_RETURN_IF_ERROR(store::PrepareOwnerOnlyDatabase(path));
  sqlite3* db = nullptr;
  const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "cannot open audit database " + path);
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<AuditStore> store(new AuditStore(db));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  sqlite3_extended_result_codes(db, 1);
  if (!options.read_only) {
    // WAL so readers never block the writer; FULL so a commit survives power loss.
    KIMI_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
    KIMI_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=FULL"));
    // A reader's snapshot (an export) keeps the WAL from being rewound while it lasts, so the
    // file grows with every commit meanwhile; once a checkpoint rewinds it, it is cut back to
    // 64 MiB instead of keeping its largest size for good.
    KIMI_RETURN_IF_ERROR(store->Exec("PRAGMA journal_size_limit=67108864"));
    // Replaces SQLite's automatic checkpoint (see WalPages in the header).
    sqlite3_wal_hook(
        db,
        [](void* self, sqlite3*, const char*, int pages) {
          static_cast<AuditStore*>(self)->wal_pages_ = pages;
          return SQLITE_OK;
        },
        store.get());
    KIMI_RETURN_IF_ERROR(store->Exec(kSchema));
    KIMI_RETURN_IF_ERROR(store->AddLaterColumns());
    KIMI_RETURN_IF_ERROR(store->Exec(kClientRequestIdIndex));
    if (options.max_page_count > 0) {
      const std::string pragma = "PRAGMA max_page_count=" + std::to_string(options.max_page_count);
      KIMI_RETURN_IF_ERROR(store->Exec(pragma.c_str()));
    }
  } else {
    // Fails with a clear error when the file is not an audit database.
    KIMI_RETURN_IF_ERROR(store->Exec("SELECT 1 FROM audit_records LIMIT 1"));
  }
  static_assert(std::size(kLaterColumns) == std::tuple_size_v<decltype(later_columns_present_)>);
  for (size_t i = 0; i < std::size(kLaterColumns); ++i) {
    KIMI_ASSIGN_OR_RETURN(bool present, store->HasColumn("audit_records", kLaterColumns[i].name));
    store->later_columns_present_[i] = present;
  }
  return store;
}

AuditStore::~AuditStore() {
  // The connection closes only once its statements are finalised.
  for (SqlStatement* kept :
       {&open_stream_, &close_stream_, &insert_record_, &insert_content_, &upsert_tree_, &begin_, &commit_}) {
    *kept = SqlStatement();
  }
  sqlite3_close(db_);
}

Status AuditStore::Exec(const char* sql) {
  return store::Exec(db_, sql, kCodes).WithContext("audit database");
}

Result<bool> AuditStore::HasColumn(const char* table, const char* column) {
  const std::string sql = std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = ?1";
  Result<bool> row = SqlStatement(db_, sql, kCodes).Bind(1, column).Step();
  if (!row.ok()) return row.status().WithContext("audit database: cannot read the schema");
  return row;
}

Status AuditStore::AddLaterColumns() {
  for (const AddedColumn& column : kLaterColumns) {
    KIMI_ASSIGN_OR_RETURN(bool present, HasColumn("audit_records", column.name));
    if (present) continue;
    const std::string sql = std::string("ALTER TABLE audit_records ADD COLUMN ") + column.name + " " + column.type;
    KIMI_RETURN_IF_ERROR(Exec(sql.c_str()));
  }
  return Status::OK();
}

Status AuditStore::ExecForTest(const std::string& sql) { return Exec(sql.c_str()); }

Status AuditStore::RunKept(const char* sql, SqlStatement* kept) {
  KIMI_RETURN_IF_ERROR(kept->PrepareOnce(db_, sql, kCodes).WithContext("audit database: cannot prepare statement"));
  Status s = kept->Run().WithContext("audit database");
  kept->Reset();
  return s;
}

Result<CompactTree> AuditStore::LoadTree() {
  KIMI_ASSIGN_OR_RETURN(std::optional<CompactTree> stored, ReadStoredTree());
  KIMI_ASSIGN_OR_RETURN(uint64_t rows, RecordCount());
  const CompactTree tree = stored.has_value() ? *stored : CompactTree();
  if (tree.size() != rows) {
    return Status::Corruption("audit database holds " + std::to_string(rows) + " records but its tree has " +
                              std::to_string(tree.size()) + " leaves; run `kimictl audit verify`");
  }
  return tree;
}

// Prepares a statement WriteRows keeps.
Status AuditStore::Keep(SqlStatement* kept, const char* sql) {
  return kept->PrepareOnce(db_, sql, kCodes).WithContext("audit database: cannot prepare statement");
}

Status AuditStore::WriteRows(std::span<const PendingRow> rows, const CompactTree& tree_after) {
  KIMI_RETURN_IF_ERROR(Keep(
      &insert_record_,
      "INSERT INTO audit_records(seq, time_ms, actor, role, source, request_id, action, target, model, "
      "model_digest, outcome, http_status, prompt_tokens, completion_tokens, ttft_us, total_us, policy, "
      "request_sha256, response_sha256, detail, content_sha256, leaf_hash, v, backend, route_decision, attempts, "
      "client_request_id, start_seq) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,"
      "?28)"));
  KIMI_RETURN_IF_ERROR(Keep(&open_stream_, "INSERT INTO audit_open_streams(seq) VALUES(?1)"));
  KIMI_RETURN_IF_ERROR(Keep(&close_stream_, "DELETE FROM audit_open_streams WHERE seq = ?1"));
  KIMI_RETURN_IF_ERROR(Keep(&insert_content_, "INSERT INTO audit_content(seq, prompt, completion) VALUES(?1,?2,?3)"));
  KIMI_RETURN_IF_ERROR(Keep(&upsert_tree_,
                            "INSERT INTO audit_tree(id, size, edge) VALUES(1, ?1, ?2) "
                            "ON CONFLICT(id) DO UPDATE SET size = excluded.size, edge = excluded.edge"));
  for (const PendingRow& row : rows) {
    const AuditRecord& r = *row.record;
    SqlStatement& st = insert_record_;
    st.Reset();
    st.Bind(1, static_cast<int64_t>(r.seq)).Bind(2, r.time_ms).Bind(3, r.actor).Bind(4, r.role).Bind(5, r.source);
    st.Bind(6, r.request_id).Bind(7, r.action).Bind(8, r.target).Bind(9, r.model).Bind(10, r.model_digest);
    st.Bind(11, r.outcome).Bind(12, r.http_status).Bind(13, r.prompt_tokens).Bind(14, r.completion_tokens);
    st.Bind(15, r.ttft_us).Bind(16, r.total_us).Bind(17, CanonicalStringArray(r.policy));
    st.Bind(18, r.request_sha256).Bind(19, r.response_sha256).Bind(20, r.detail).Bind(21, r.content_sha256);
    st.BindBlob(22, AsBytes(row.leaf_hash)).Bind(23, r.version).Bind(24, r.backend).Bind(25, r.route_decision);
    st.Bind(26, r.attempts).Bind(27, r.client_request_id).Bind(28, r.start_seq);
    KIMI_RETURN_IF_ERROR(st.Run().WithContext("audit database: cannot insert record"));
    KIMI_RETURN_IF_ERROR(TrackStream(r));
    if (r.content.has_value()) {
      SqlStatement& cs = insert_content_;
      cs.Reset();
      cs.Bind(1, static_cast<int64_t>(r.seq)).Bind(2, r.content->prompt).Bind(3, r.content->completion);
      KIMI_RETURN_IF_ERROR(cs.Run().WithContext("audit database: cannot insert content"));
    }
  }
  upsert_tree_.Reset();
  upsert_tree_.Bind(1, static_cast<int64_t>(tree_after.size())).BindBlob(2, tree_after.SerializeEdge());
  return upsert_tree_.Run().WithContext("audit database: cannot store the tree");
}

Status AuditStore::TrackStream(const AuditRecord& r) {
  SqlStatement* st = nullptr;
  int64_t seq = 0;
  if (r.outcome == kOutcomeStreamStarted) {
    st = &open_stream_;
    seq = static_cast<int64_t>(r.seq);
  } else if (r.start_seq != kNoStartSeq) {
    st = &close_stream_;
    seq = r.start_seq;
  } else {
    return Status::OK();
  }
  st->Reset();
  return st->Bind(1, seq).Run().WithContext("audit database: cannot track an open stream");
}

Result<std::vector<uint64_t>> AuditStore::OpenStreams() {
  SqlStatement st(db_, "SELECT seq FROM audit_open_streams ORDER BY seq", kCodes);
  std::vector<uint64_t> seqs;
  KIMI_RETURN_IF_ERROR(st.ForEachRow([&] { seqs.push_back(static_cast<uint64_t>(st.Int(0))); })
                           .WithContext("audit database: cannot read the open streams"));
  return seqs;
}

Result<bool> AuditStore::HasStreamEnd(uint64_t start_seq) {
  SqlStatement st(db_, "SELECT 1 FROM audit_records WHERE start_seq = ? LIMIT 1", kCodes);
  st.Bind(1, static_cast<int64_t>(start_seq));
  bool found = false;
  KIMI_RETURN_IF_ERROR(st.ForEachRow([&] { found = true; }).WithContext("audit database: cannot look for a stream's end"));
  return found;
}

Status AuditStore::AppendBatch(std::span<const PendingRow> rows, const CompactTree& tree_after) {
  KIMI_RETURN_IF_ERROR(RunKept("BEGIN IMMEDIATE", &begin_));
  Status s = WriteRows(rows, tree_after);
  if (s.ok()) s = RunKept("COMMIT", &commit_);
  if (!s.ok() && sqlite3_get_autocommit(db_) == 0) {
    // SQLite may already have rolled back (SQLITE_FULL does); a second rollback is harmless.
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  return s;
}

Status AuditStore::CheckpointWal() {
  int log_pages = 0;
  int copied_pages = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_pages, &copied_pages);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "audit database: checkpoint of the write-ahead log failed");
  // Pages a reader still holds stay due; the next commit's hook reports the log afresh.
  wal_pages_ = log_pages - copied_pages;
  return Status::OK();
}

Status AuditStore::InsertHead(const SignedTreeHead& head, const WriterState* state) {
  if (state == nullptr) return WriteHead(head);
  // The head and the state that counts it commit together: no crash leaves one without the other.
  KIMI_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status s = WriteHead(head);
  if (s.ok()) s = WriteWriterState(*state);
  if (s.ok()) s = Exec("COMMIT");
  if (!s.ok() && sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return s;
}

Status AuditStore::WriteHead(const SignedTreeHead& head) {
  SqlStatement st(db_,
                  "INSERT INTO audit_heads(tree_size, timestamp_ms, root_hash, key_id, signature) "
                  "VALUES(?1,?2,?3,?4,?5)",
                  kCodes);
  st.Bind(1, static_cast<int64_t>(head.tree_size)).Bind(2, head.timestamp_ms);
  st.BindBlob(3, head.root_hash).BindBlob(4, head.key_id).BindBlob(5, head.signature);
  return st.Run().WithContext("audit database: cannot store a signed head");
}

Status AuditStore::WriteWriterState(const WriterState& state) {
  SqlStatement st(db_,
                  "INSERT OR REPLACE INTO audit_writer_state(id, heads, head_size, verified_size, "
                  "verified_root, timestamp_ms, clean, key_id, signature, verified_edge) "
                  "VALUES(1,?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                  kCodes);
  st.Bind(1, static_cast<int64_t>(state.heads)).Bind(2, static_cast<int64_t>(state.head_size));
  st.Bind(3, static_cast<int64_t>(state.verified_size)).BindBlob(4, state.verified_root);
  st.Bind(5, state.timestamp_ms).Bind(6, state.clean ? 1 : 0).BindBlob(7, state.key_id);
  st.BindBlob(8, state.signature).BindBlob(9, state.verified_edge);
  return st.Run().WithContext("audit database: cannot store the writer state");
}

Result<std::optional<WriterState>> AuditStore::ReadWriterState() {
  // A database made before the table exists, opened read-only, has none.
  KIMI_ASSIGN_OR_RETURN(bool present, HasColumn("audit_writer_state", "heads"));
  if (!present) return std::optional<WriterState>();
  SqlStatement st(db_,
                  "SELECT heads, head_size, verified_size, verified_root, timestamp_ms, clean, key_id, "
                  "signature, verified_edge FROM audit_writer_state WHERE id = 1",
                  kCodes);
  Result<bool> row = st.Step();
  if (!row.ok()) return row.status().WithContext("audit database: cannot read the writer state");
  if (!*row) return std::optional<WriterState>();
  WriterState w;
  w.heads = static_cast<uint64_t>(st.Int(0));
  w.head_size = static_cast<uint64_t>(st.Int(1));
  w.verified_size = static_cast<uint64_t>(st.Int(2));
  w.timestamp_ms = st.Int(4);
  w.clean = st.Int(5) != 0;
  CopyBlob(st.Blob(3), &w.verified_root);
  CopyBlob(st.Blob(6), &w.key_id);
  CopyBlob(st.Blob(7), &w.signature);
  w.verified_edge = st.Blob(8);
  return std::optional<WriterState>(std::move(w));
}

Result<uint64_t> AuditStore::HeadCount() {
  KIMI_ASSIGN_OR_RETURN(SqlStatement st,
                        QueryRow(db_, "SELECT count(*) FROM audit_heads", "audit database: cannot count signed heads"));
  return static_cast<uint64_t>(st.Int(0));
}

Result<int64_t> AuditStore::PurgeContentBefore(int64_t cutoff_ms) {
  SqlStatement st(db_, "DELETE FROM audit_content WHERE seq IN (SELECT seq FROM audit_records WHERE time_ms < ?1)",
                  kCodes);
  KIMI_RETURN_IF_ERROR(st.Bind(1, cutoff_ms).Run().WithContext("audit database: cannot purge content"));
  return static_cast<int64_t>(st.Changes());
}

std::string AuditStore::LaterColumn(size_t i) const {
  return later_columns_present_[i] ? std::string("r.") + kLaterColumns[i].name : kLaterColumns[i].absent;
}

std::string AuditStore::ScanColumns() const {
  std::string columns = kFirstColumns;
  for (size_t i = 0; i < std::size(kLaterColumns); ++i) columns += ", " + LaterColumn(i);
  return columns + ", c.prompt, c.completion";
}

namespace {

// A list of texts as one bound parameter (a JSON array read by json_each), so that a list of
// any length is one placeholder and never text in the SQL.
std::string JsonList(const std::vector<std::string>& values) {
  return nlohmann::json(values).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string AuditStore::ScanSql(const char* columns, const RecordQuery& q, std::vector<std::string>* bound) const {
  std::string sql = std::string("SELECT ") + columns +
                    " FROM audit_records r LEFT JOIN audit_content c ON c.seq = r.seq "
                    "WHERE r.seq >= ?1 AND r.seq < ?2 AND r.time_ms >= ?3 AND r.time_ms < ?4";
  // Every value from the query is bound; the SQL holds only column names and placeholders.
  const auto param = [bound](std::string value) {
    bound->push_back(std::move(value));
    return "?" + std::to_string(4 + bound->size());
  };
  const std::pair<std::string, const std::string*> filters[] = {
      {"r.actor", &q.actor}, {"r.action", &q.action}, {"r.outcome", &q.outcome}, {"r.model", &q.model},
      {"r.request_id", &q.request_id}, {LaterColumn(kClientRequestIdColumn), &q.client_request_id}};
  for (const auto& [column, value] : filters) {
    if (!value->empty()) sql += " AND " + column + " = " + param(*value);
  }
  if (q.actor_in) sql += " AND r.actor IN (SELECT value FROM json_each(" + param(JsonList(*q.actor_in)) + "))";
  if (!q.contains.empty()) {
    const std::string like = param(store::LikeContains(q.contains));
    sql += " AND (";
    for (const std::string& column : {std::string("r.actor"), std::string("r.request_id"), std::string("r.target"),
                                      LaterColumn(kClientRequestIdColumn)}) {
      sql += column + " LIKE " + like + " ESCAPE '\\' OR ";
    }
    sql += "r.actor IN (SELECT value FROM json_each(" + param(JsonList(q.contains_actors)) + ")))";
  }
  sql += q.newest_first ? " ORDER BY r.seq DESC" : " ORDER BY r.seq";
  if (q.limit > 0) sql += " LIMIT " + std::to_string(q.limit);
  return sql;
}

void AuditStore::BindScan(SqlStatement& st, const RecordQuery& q, const std::vector<std::string>& bound) {
  st.Bind(1, static_cast<int64_t>(q.from_seq)).Bind(2, static_cast<int64_t>(q.to_seq));
  st.Bind(3, q.since_ms).Bind(4, q.until_ms);
  for (size_t i = 0; i < bound.size(); ++i) st.Bind(static_cast<int>(5 + i), bound[i]);
}

Status AuditStore::ScanRecords(const RecordQuery& q, const std::function<Status(StoredRecord&)>& visit) {
  std::vector<std::string> bound;
  SqlStatement st(db_, ScanSql(ScanColumns().c_str(), q, &bound), kCodes);
  BindScan(st, q, bound);
  Status visited = Status::OK();
  Status walked = st.ForEachRow([&] {
    StoredRecord row = DecodeRow(st, q.with_content);
    visited = visit(row);
    return visited;
  });
  // The visitor's error is its own; only SQLite's gets the database's context.
  return visited.ok() ? walked.WithContext("audit database: scan failed") : visited;
}

Result<std::string> AuditStore::ExplainScan(const RecordQuery& q) {
  std::vector<std::string> bound;
  SqlStatement st(db_, "EXPLAIN QUERY PLAN " + ScanSql(ScanColumns().c_str(), q, &bound), kCodes);
  BindScan(st, q, bound);
  std::string plan;
  KIMI_RETURN_IF_ERROR(st.ForEachRow([&] { plan += st.Text(3) + "\n"; })  // "detail"
                           .WithContext("audit database: cannot explain scan"));
  return plan;
}

Result<RecordRangeSummary> AuditStore::SummarizeRecords(const RecordQuery& q) {
  RecordQuery all = q;
  all.limit = 0;
  std::vector<std::string> bound;
  SqlStatement st(db_, ScanSql("count(*), max(r.seq)", all, &bound), kCodes);
  BindScan(st, all, bound);
  Result<bool> row = st.Step();
  if (!row.ok() || !*row) {
    return row.ok() ? Status::IOError("audit database: cannot count records: the query returned no row")
                    : row.status().WithContext("audit database: cannot count records");
  }
  RecordRangeSummary summary;
  summary.count = static_cast<uint64_t>(st.Int(0));
  if (st.Type(1) != SqlType::kNull) summary.last_seq = static_cast<uint64_t>(st.Int(1));
  return summary;
}

Status AuditStore::ScanLeafHashes(uint64_t from, uint64_t to, const std::function<void(const Hash&)>& visit) {
  SqlStatement st(db_, "SELECT seq, leaf_hash FROM audit_records WHERE seq >= ?1 AND seq < ?2 ORDER BY seq", kCodes);
  st.Bind(1, static_cast<int64_t>(from)).Bind(2, static_cast<int64_t>(to));
  uint64_t next = from;
  Status gap = Status::OK();
  Status walked = st.ForEachRow([&] {
    const uint64_t seq = static_cast<uint64_t>(st.Int(0));
    const std::string leaf = st.Blob(1);
    if (seq != next) {
      gap = Status::Corruption("record " + std::to_string(next) + " is missing");
    } else if (leaf.size() != kHashSize) {
      gap = Status::Corruption("record " + std::to_string(seq) + " has no leaf hash");
    } else {
      Hash h;
      std::memcpy(h.data(), leaf.data(), kHashSize);
      visit(h);
      ++next;
    }
    return gap;
  });
  if (!gap.ok()) return gap;
  KIMI_RETURN_IF_ERROR(walked.WithContext("audit database: leaf scan failed"));
  if (next != to) return Status::Corruption("record " + std::to_string(next) + " is missing");
  return Status::OK();
}

Result<std::optional<StoredRecord>> AuditStore::ReadRecord(uint64_t seq) {
  std::optional<StoredRecord> found;
  RecordQuery q;
  q.from_seq = seq;
  q.to_seq = seq + 1;
  KIMI_RETURN_IF_ERROR(ScanRecords(q, [&](StoredRecord& r) {
    found = std::move(r);
    return Status::OK();
  }));
  return found;
}

Result<std::vector<SignedTreeHead>> AuditStore::ReadHeads() {
  std::vector<SignedTreeHead> heads;
  KIMI_RETURN_IF_ERROR(VisitHeads(db_, "SELECT tree_size, timestamp_ms, root_hash, key_id, signature FROM audit_heads "
                                       "ORDER BY id",
                                  -1, [&](const SignedTreeHead& h) {
                                    heads.push_back(h);
                                    return true;
                                  }));
  return heads;
}

Status AuditStore::ScanHeadsAbove(uint64_t above_size, const std::function<bool(const SignedTreeHead&)>& visit) {
  return VisitHeads(db_,
                    "SELECT tree_size, timestamp_ms, root_hash, key_id, signature FROM audit_heads "
                    "WHERE tree_size > ?1 ORDER BY tree_size, id",
                    static_cast<int64_t>(above_size), visit);
}

Result<uint64_t> AuditStore::LargestHeadSize() {
  KIMI_ASSIGN_OR_RETURN(SqlStatement st, QueryRow(db_, "SELECT coalesce(max(tree_size), 0) FROM audit_heads",
                                                  "audit database: cannot read signed heads"));
  const int64_t size = st.Int(0);
  return static_cast<uint64_t>(size < 0 ? 0 : size);
}

Status AuditStore::BeginSnapshot() {
  KIMI_RETURN_IF_ERROR(Exec("BEGIN"));
  // A read transaction takes its snapshot at its first read.
  return Exec("SELECT count(*) FROM audit_heads");
}

Status AuditStore::EndSnapshot() { return Exec("COMMIT"); }

Result<uint64_t> AuditStore::RecordCount() {
  KIMI_ASSIGN_OR_RETURN(SqlStatement st, QueryRow(db_, "SELECT count(*), coalesce(max(seq) + 1, 0) FROM audit_records",
                                                  "audit database: cannot count records"));
  const int64_t count = st.Int(0);
  const int64_t next = st.Int(1);
  if (count != next) {
    return Status::Corruption("audit records are not dense: " + std::to_string(count) + " rows, next seq " +
                              std::to_string(next));
  }
  return static_cast<uint64_t>(count);
}

Result<uint64_t> AuditStore::NextSeq() {
  KIMI_ASSIGN_OR_RETURN(SqlStatement st, QueryRow(db_, "SELECT coalesce(max(seq) + 1, 0) FROM audit_records",
                                                  "audit database: cannot read the last record"));
  return static_cast<uint64_t>(st.Int(0));
}

Result<std::vector<std::string>> AuditStore::DistinctActions() {
  // min(action) above the previous one is a seek in audit_records_action: as many seeks as
  // there are actions, however long the log.
  std::vector<std::string> actions;
  SqlStatement st(db_, "SELECT min(action) FROM audit_records WHERE action > ?1", kCodes);
  std::string after;
  for (;;) {
    st.Reset();
    Result<bool> row = st.Bind(1, after).Step();
    if (!row.ok()) return row.status().WithContext("audit database: cannot list actions");
    if (!*row || st.Type(0) != SqlType::kText) return actions;
    after = st.Text(0);
    actions.push_back(after);
  }
}

Result<std::optional<uint64_t>> AuditStore::FirstMissingSeq() {
  KIMI_ASSIGN_OR_RETURN(
      SqlStatement st,
      QueryRow(db_,
               "SELECT CASE WHEN count(*) = coalesce(max(seq) + 1, 0) THEN -1 "
               "WHEN NOT EXISTS (SELECT 1 FROM audit_records WHERE seq = 0) THEN 0 "
               "ELSE (SELECT a.seq + 1 FROM audit_records a WHERE a.seq >= 0 AND NOT EXISTS "
               "(SELECT 1 FROM audit_records b WHERE b.seq = a.seq + 1) ORDER BY a.seq LIMIT 1) END FROM audit_records",
               "audit database: cannot count records"));
  const int64_t missing = st.Int(0);
  if (missing < 0) return std::optional<uint64_t>();
  return std::optional<uint64_t>(static_cast<uint64_t>(missing));
}

Result<std::optional<CompactTree>> AuditStore::ReadStoredTree() {
  SqlStatement st(db_, "SELECT size, edge FROM audit_tree WHERE id = 1", kCodes);
  Result<bool> row = st.Step();
  if (!row.ok()) return row.status().WithContext("audit database: cannot read the tree");
  if (!*row) return std::optional<CompactTree>();
  const int64_t size = st.Int(0);
  if (size < 0) return Status::Corruption("audit tree size is negative");
  KIMI_ASSIGN_OR_RETURN(CompactTree tree, CompactTree::Deserialize(static_cast<uint64_t>(size), st.Blob(1)));
  return std::optional<CompactTree>(std::move(tree));
}

}  // namespace kimi::audit
