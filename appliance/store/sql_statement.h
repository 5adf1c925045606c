// SqlStatement: one prepared SQLite statement. Every module that runs SQL with parameters or
// reads rows goes through it (the Store's own bookkeeping, auth, policy, models, the audit log).
//
// It owns the sqlite3_stmt and finalises it on destruction. Errors are kept: a failed prepare
// or bind is remembered and returned by the next Step() or Run(), so a caller binds without
// checking each call. Every error is a kimi::Status whose message gives SQLite's reason and
// names the statement's SQL. What code that Status has is the caller's choice (SqlErrorCodes).
// Public header of store/: other folders include it.
// Thread safety: none. A statement belongs to whoever holds its connection (a Store callback
// runs under the Store's mutex; the audit store is used by one thread at a time).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kimi/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kimi::store {

// The Status code of a failure.
enum class SqlErrorCodes {
  // Always IOError. The API hides an IOError's message from clients, so a store whose errors
  // can reach a request's answer (auth, policy, models) never shows SQL there.
  kIOError,
  // By SQLite's cause: full -> ResourceExhausted; busy, locked -> Unavailable; corrupt, not a
  // database -> Corruption; read-only, no permission -> PermissionDenied; else IOError. The
  // audit log reports why it cannot write (fail-closed answers, readiness).
  kByCause,
};

// A column's storage class (SQLite's sqlite3_column_type).
enum class SqlType { kInteger, kFloat, kText, kBlob, kNull };

// The Status of a failed SQLite call with result code rc on db, naming `sql`:
// "<reason> in \"<sql>\"" (a long statement is cut short), or "<reason>" for a call that
// runs no statement (sql empty: open, checkpoint).
Status SqlError(sqlite3* db, int rc, std::string_view sql, SqlErrorCodes codes);

// Runs `sql` (one or more statements, no parameters, no rows wanted) on db.
Status Exec(sqlite3* db, std::string_view sql, SqlErrorCodes codes = SqlErrorCodes::kIOError);

class SqlStatement {
 public:
  // Holds nothing; ok() is false. A statement kept across calls starts so (see PrepareOnce).
  SqlStatement() : status_(Status::FailedPrecondition("no SQL statement prepared")) {}
  // Prepares `sql` (its first statement) on db. A failure is kept in status().
  SqlStatement(sqlite3* db, std::string_view sql, SqlErrorCodes codes = SqlErrorCodes::kIOError);
  ~SqlStatement();
  SqlStatement(SqlStatement&& other) noexcept;
  SqlStatement& operator=(SqlStatement&& other) noexcept;
  SqlStatement(const SqlStatement&) = delete;
  SqlStatement& operator=(const SqlStatement&) = delete;

  // For a statement kept between calls (prepared once, run many times): prepares `sql` when
  // this holds no prepared statement, else Reset(). An error leaves it unprepared, so the
  // next call tries again.
  Status PrepareOnce(sqlite3* db, std::string_view sql, SqlErrorCodes codes = SqlErrorCodes::kIOError);

  // OK until a prepare, bind or step fails; then that first error.
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Bind parameter i (1-based). SQLite copies the value, so a temporary may be passed.
  SqlStatement& Bind(int i, int64_t value);
  SqlStatement& Bind(int i, int value) { return Bind(i, static_cast<int64_t>(value)); }
  SqlStatement& Bind(int i, double value);
  SqlStatement& Bind(int i, std::string_view text);  // as TEXT
  SqlStatement& Bind(int i, const char* text) { return Bind(i, std::string_view(text)); }
  SqlStatement& Bind(int i, const std::string& text) { return Bind(i, std::string_view(text)); }
  SqlStatement& BindBlob(int i, std::string_view bytes);  // as BLOB
  SqlStatement& BindBlob(int i, std::span<const uint8_t> bytes);

  // Advances to the next row: true when a row is ready to read, false when the statement is
  // done. Preconditions: none; an earlier error is returned again.
  Result<bool> Step();
  // Runs a statement that returns no rows (INSERT, UPDATE, DELETE, BEGIN, ...).
  Status Run();
  // Steps to the end, calling on_row() at each row; on_row may return void or a Status, and
  // its first error stops the walk and is returned.
  template <typename F>
  Status ForEachRow(F&& on_row);
  // Makes the statement ready to be bound and run again: clears its bindings and a bind or
  // step error (a failed prepare stays). A kept statement is reset after use, so that it
  // holds no read snapshot between calls.
  void Reset();
  // Rows changed by the connection's last INSERT, UPDATE or DELETE.
  int Changes() const;

  // Reads column col (0-based) of the current row. Preconditions: Step() returned true.
  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;  // every byte, NULs included; "" for NULL
  std::string Blob(int col) const;  // the bytes; "" for NULL
  SqlType Type(int col) const;
  // Columns in a row of this statement's result.
  int ColumnCount() const;

 private:
  Status Fail(int rc);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  SqlErrorCodes codes_ = SqlErrorCodes::kIOError;
  bool prepared_ok_ = false;  // the prepare succeeded; Reset() clears only later errors
  Status status_;
};

template <typename F>
Status SqlStatement::ForEachRow(F&& on_row) {
  for (;;) {
    KIMI_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
    if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
      on_row();
    } else {
      KIMI_RETURN_IF_ERROR(on_row());
    }
  }
}

// `text` as a LIKE pattern that matches it anywhere, for use with ESCAPE '\': %, _ and \ in
// the text match only themselves ("" gives "%%", which matches every text).
std::string LikeContains(std::string_view text);

}  // namespace kimi::store
