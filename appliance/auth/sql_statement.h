// SqlStatement: one prepared SQLite statement, finalised on destruction, with binding by
// position and typed column reads. Internal to the auth module's store.
//
// Thread safety: one statement belongs to the thread that holds the Store's connection.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "auth/server_secret.h"
#include "kimi/status.h"

namespace kimi::auth {

class SqlStatement {
 public:
  SqlStatement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  // Uses a statement prepared earlier and kept by the caller (*cache, prepared on first use
  // with SQLITE_PREPARE_PERSISTENT); it is reset, not finalised, on destruction. The caller
  // finalises *cache before the connection closes.
  SqlStatement(sqlite3* db, const char* sql, sqlite3_stmt** cache) : db_(db), owned_(false) {
    if (*cache == nullptr && sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, cache, nullptr) != SQLITE_OK) {
      *cache = nullptr;
    }
    stmt_ = *cache;
  }
  ~SqlStatement() {
    if (owned_) {
      sqlite3_finalize(stmt_);
    } else if (stmt_ != nullptr) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }
  SqlStatement(const SqlStatement&) = delete;
  SqlStatement& operator=(const SqlStatement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  SqlStatement& Bind(int i, std::string_view text) {
    if (stmt_) sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqlStatement& Bind(int i, const char* text) { return Bind(i, std::string_view(text)); }
  SqlStatement& Bind(int i, int64_t value) {
    if (stmt_) sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  SqlStatement& Bind(int i, double value) {
    if (stmt_) sqlite3_bind_double(stmt_, i, value);
    return *this;
  }
  SqlStatement& Bind(int i, const Digest& blob) {
    if (stmt_) sqlite3_bind_blob(stmt_, i, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    return *this;
  }

  // Makes the statement ready to be bound and run again.
  void Reset() {
    if (stmt_ == nullptr) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return stmt_ ? sqlite3_step(stmt_) : SQLITE_ERROR; }
  // Runs a statement that returns no rows.
  Status Run() {
    int rc = Step();
    return rc == SQLITE_DONE ? Status::OK() : Error();
  }
  Status Error() const { return Status::IOError(std::string("auth store: ") + sqlite3_errmsg(db_)); }
  int Changes() const { return sqlite3_changes(db_); }

  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  Digest Blob(int col) const {
    Digest out{};
    const void* data = sqlite3_column_blob(stmt_, col);
    if (data != nullptr && sqlite3_column_bytes(stmt_, col) == static_cast<int>(out.size())) {
      std::memcpy(out.data(), data, out.size());
    }
    return out;
  }

 private:
  sqlite3* db_;
  bool owned_ = true;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace kimi::auth
