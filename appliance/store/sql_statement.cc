#include "store/sql_statement.h"

#include <sqlite3.h>

#include <cstring>

namespace kimi::store {
namespace {

// Enough of a statement to recognise it in a message; a 28-column INSERT is not read whole.
constexpr size_t kMaxSqlInMessage = 120;

std::string Quoted(std::string_view sql) {
  while (!sql.empty() && (sql.front() == ' ' || sql.front() == '\n')) sql.remove_prefix(1);
  std::string out = "\"";
  if (sql.size() > kMaxSqlInMessage) {
    out.append(sql.substr(0, kMaxSqlInMessage));
    out += "...";
  } else {
    out.append(sql);
  }
  return out + "\"";
}

}  // namespace

Status SqlError(sqlite3* db, int rc, std::string_view sql, SqlErrorCodes codes) {
  std::string msg = sqlite3_errstr(rc);
  if (db != nullptr) {
    const char* detail = sqlite3_errmsg(db);
    if (detail != nullptr && std::strcmp(detail, sqlite3_errstr(rc)) != 0) msg += std::string(" (") + detail + ")";
  }
  if (!sql.empty()) msg += " in " + Quoted(sql);
  if (codes == SqlErrorCodes::kIOError) return Status::IOError(std::move(msg));
  switch (rc & 0xff) {
    case SQLITE_FULL: return Status::ResourceExhausted(std::move(msg));
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Status::Unavailable(std::move(msg));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return Status::Corruption(std::move(msg));
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return Status::PermissionDenied(std::move(msg));
    default: return Status::IOError(std::move(msg));
  }
}

Status Exec(sqlite3* db, std::string_view sql, SqlErrorCodes codes) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::OK() : SqlError(db, rc, sql, codes);
}

SqlStatement::SqlStatement(sqlite3* db, std::string_view sql, SqlErrorCodes codes) : db_(db), codes_(codes) {
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    status_ = SqlError(db, rc, sql, codes);
  } else if (stmt_ == nullptr) {
    status_ = Status::InvalidArgument("no SQL statement in " + Quoted(sql));
  } else {
    prepared_ok_ = true;
  }
}

SqlStatement::~SqlStatement() { sqlite3_finalize(stmt_); }

SqlStatement::SqlStatement(SqlStatement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      codes_(other.codes_),
      prepared_ok_(std::exchange(other.prepared_ok_, false)),
      status_(std::exchange(other.status_, Status::FailedPrecondition("no SQL statement prepared"))) {}

SqlStatement& SqlStatement::operator=(SqlStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    codes_ = other.codes_;
    prepared_ok_ = std::exchange(other.prepared_ok_, false);
    status_ = std::exchange(other.status_, Status::FailedPrecondition("no SQL statement prepared"));
  }
  return *this;
}

Status SqlStatement::PrepareOnce(sqlite3* db, std::string_view sql, SqlErrorCodes codes) {
  if (prepared_ok_) {
    Reset();
    return Status::OK();
  }
  SqlStatement prepared(db, sql, codes);
  if (!prepared.ok()) return prepared.status();
  *this = std::move(prepared);
  return Status::OK();
}

Status SqlStatement::Fail(int rc) {
  if (status_.ok()) status_ = SqlError(db_, rc, sqlite3_sql(stmt_), codes_);
  return status_;
}

SqlStatement& SqlStatement::Bind(int i, int64_t value) {
  if (ok()) {
    const int rc = sqlite3_bind_int64(stmt_, i, value);
    if (rc != SQLITE_OK) Fail(rc);
  }
  return *this;
}

SqlStatement& SqlStatement::Bind(int i, double value) {
  if (ok()) {
    const int rc = sqlite3_bind_double(stmt_, i, value);
    if (rc != SQLITE_OK) Fail(rc);
  }
  return *this;
}

SqlStatement& SqlStatement::Bind(int i, std::string_view text) {
  if (ok()) {
    const int rc = sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) Fail(rc);
  }
  return *this;
}

SqlStatement& SqlStatement::BindBlob(int i, std::string_view bytes) {
  if (ok()) {
    const int rc = sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) Fail(rc);
  }
  return *this;
}

SqlStatement& SqlStatement::BindBlob(int i, std::span<const uint8_t> bytes) {
  return BindBlob(i, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Result<bool> SqlStatement::Step() {
  if (!ok()) return status_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Fail(rc);
}

Status SqlStatement::Run() {
  KIMI_ASSIGN_OR_RETURN(bool row, Step());
  if (row) {
    status_ = Status::Internal("a statement run for no rows returned one: " + Quoted(sqlite3_sql(stmt_)));
    return status_;
  }
  return Status::OK();
}

void SqlStatement::Reset() {
  if (stmt_ == nullptr) return;
  // A failed step's reset returns that step's error again; it was reported already.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  if (prepared_ok_) status_ = Status::OK();
}

int SqlStatement::Changes() const { return sqlite3_changes(db_); }

int64_t SqlStatement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

double SqlStatement::Double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string SqlStatement::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string SqlStatement::Blob(int col) const {
  const void* data = sqlite3_column_blob(stmt_, col);
  if (data == nullptr) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int SqlStatement::ColumnCount() const { return sqlite3_column_count(stmt_); }

SqlType SqlStatement::Type(int col) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_INTEGER: return SqlType::kInteger;
    case SQLITE_FLOAT: return SqlType::kFloat;
    case SQLITE_TEXT: return SqlType::kText;
    case SQLITE_BLOB: return SqlType::kBlob;
    default: return SqlType::kNull;
  }
}

std::string LikeContains(std::string_view text) {
  std::string pattern = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') pattern.push_back('\\');
    pattern.push_back(c);
  }
  pattern.push_back('%');
  return pattern;
}

}  // namespace kimi::store
