// Store: the daemon's SQLite database, <data_dir>/appliance.db.
//
// Owns the one read-write connection to the database. Open() creates the data directory
// (mode 0700) and the file, and sets: WAL journal (readers do not block the writer),
// synchronous=FULL (a committed transaction survives power loss: the audit log depends on
// it), foreign_keys=ON, busy_timeout (another process, e.g. kimictl, holding the lock makes
// us wait instead of failing at once).
//
// Migrations: each module owns a numbered series of migrations under its own component name
// ("audit" 1, 2, ...; "auth" 1, ...), so modules developed apart never fight over one global
// number. Migrate() applies the missing ones in the order given (the daemon's whole list is
// migrations/all_migrations.h), each in its own
// transaction, and records (component, version, name, sql, applied_at) in
// schema_migrations. It refuses a database that has a migration this binary does not know
// (a downgrade) or whose recorded SQL differs from the binary's (a migration was edited
// after release).
//
// One-writer policy: SQLite allows one writer at a time per database. In this process all
// writes go through this connection, serialised by its mutex (Write()); a module with a
// steady write load (the audit log) gets one writer thread of its own that owns its write
// path, as docs/architecture.md describes. Readers that need concurrency may later open
// read-only connections; WAL lets them read while the writer writes.
// Public header of store/: other folders include it.
// Thread safety: every public method may be called from any thread; they serialise on one
// mutex. Close() is idempotent; after it every call returns FailedPrecondition.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "kimi/status.h"
#include "store/sql_statement.h"  // Exec() and SqlStatement, for the callbacks of Write() and Read()

struct sqlite3;

namespace kimi::store {

// Written beside appliance.db when it is first created; Open() refuses to create the database
// again while the marker is there (a removed or emptied database is an error, not a fresh start).
inline constexpr std::string_view kDatabaseMarkerFile = "appliance-db.created";

struct Migration {
  std::string_view component;  // "audit"
  int version;                 // 1, 2, 3... without gaps within a component
  std::string_view name;       // "create audit_records"
  std::string_view sql;        // one or more statements
};

class Store {
 public:
  // Opens (creating when missing) <data_dir>/appliance.db. FailedPrecondition when it is missing
  // or empty but kDatabaseMarkerFile says one was created.
  static Result<std::unique_ptr<Store>> Open(const std::string& data_dir);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Applies the migrations of `migrations` that the database lacks. Returns how many were
  // applied. InvalidArgument when the list itself is inconsistent (gaps, duplicates).
  Result<int> Migrate(std::span<const Migration> migrations);

  // Runs `fn` inside a transaction on the write connection; commits when it returns OK,
  // rolls back otherwise.
  Status Write(const std::function<Status(sqlite3*)>& fn);
  // Runs `fn` on the connection without a transaction (reads, pragmas).
  Status Read(const std::function<Status(sqlite3*)>& fn);

  // Runs SQLite's quick integrity check; OK when the database reports "ok".
  Status QuickCheck();

  Status Close();
  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  std::mutex mu_;
  sqlite3* db_;  // guarded by mu_; nullptr once closed
  std::string path_;
};


}  // namespace kimi::store
