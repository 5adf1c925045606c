#include "store/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "store/owner_only.h"

namespace kimi::store {
namespace {

constexpr int kBusyTimeoutMs = 5000;

Status SqliteError(sqlite3* db, std::string_view what) {
  return Status::IOError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// One-value query, e.g. "PRAGMA journal_mode".
Result<std::string> QueryText(sqlite3* db, const char* sql) {
  SqlStatement stmt(db, sql);
  KIMI_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.Text(0) : std::string();
}

struct Applied {
  std::string sql;
};

Result<std::map<std::pair<std::string, int>, Applied>> ReadApplied(sqlite3* db) {
  std::map<std::pair<std::string, int>, Applied> out;
  SqlStatement stmt(db, "SELECT component, version, sql FROM schema_migrations");
  KIMI_RETURN_IF_ERROR(stmt.ForEachRow([&] {
    out[{stmt.Text(0), static_cast<int>(stmt.Int(1))}] = Applied{stmt.Text(2)};
  }).WithContext("reading schema_migrations"));
  return out;
}

std::string Name(const Migration& m) { return std::string(m.component) + "/" + std::to_string(m.version); }

Status CheckList(std::span<const Migration> migrations) {
  std::map<std::string, int> last;
  for (const Migration& m : migrations) {
    if (m.component.empty()) return Status::InvalidArgument("a migration has no component name");
    int& previous = last[std::string(m.component)];
    if (m.version != previous + 1) {
      return Status::InvalidArgument("migration " + Name(m) + " follows " + std::string(m.component) + "/" +
                                     std::to_string(previous) + ": versions must count up from 1 without gaps");
    }
    previous = m.version;
  }
  return Status::OK();
}

Status RecordApplied(sqlite3* db, const Migration& m) {
  SqlStatement stmt(db,
                    "INSERT INTO schema_migrations(component, version, name, sql, applied_at) "
                    "VALUES(?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ','now'))");
  stmt.Bind(1, m.component).Bind(2, m.version).Bind(3, m.name).Bind(4, m.sql);
  return stmt.Run().WithContext("recording " + Name(m));
}

Status InTransaction(sqlite3* db, const std::function<Status(sqlite3*)>& fn) {
  // IMMEDIATE takes the write lock up front, so a busy database fails (after the busy
  // timeout) before any work instead of at COMMIT.
  KIMI_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  Status s = fn(db);
  if (s.ok()) s = Exec(db, "COMMIT");
  if (!s.ok()) Exec(db, "ROLLBACK");  // the first error is the one worth reporting
  return s;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& data_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(data_dir, ec)) {
    fs::create_directories(data_dir, ec);
    if (ec) return Status::IOError("cannot create data directory " + data_dir + ": " + ec.message());
    fs::permissions(data_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  } else if (!fs::is_directory(data_dir, ec)) {
    return Status::FailedPrecondition("data directory " + data_dir + " exists and is not a directory");
  }
  std::string path = (fs::path(data_dir) / "appliance.db").string();
  // Once the database exists, its marker says so: a marker without its database means the
  // database (keys, users, the model store's versions, policies) was removed or emptied, and a
  // fresh one would start the appliance over without a word.
  const std::string marker = (fs::path(data_dir) / std::string(kDatabaseMarkerFile)).string();
  struct stat marker_stat {}, db_stat {};
  const bool marker_present = ::stat(marker.c_str(), &marker_stat) == 0;
  const bool db_present = ::lstat(path.c_str(), &db_stat) == 0 && db_stat.st_size > 0;
  if (marker_present && !db_present) {
    return Status::FailedPrecondition(
        "the database " + path + " is missing or empty, but " + marker +
        " says one was created here: restore it from a backup; to start anew on purpose (every key, user, "
        "policy version and model version gone), remove the marker first");
  }
  KIMI_RETURN_IF_ERROR(PrepareOwnerOnlyDatabase(path));
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    Status s = SqliteError(db, "cannot open database " + path);
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Store> store(new Store(db, path));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  Result<std::string> mode = QueryText(db, "PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status().WithContext("database " + path);
  if (*mode != "wal") return Status::FailedPrecondition("database " + path + ": WAL mode refused (mode is " + *mode + ")");
  KIMI_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous=FULL").WithContext("database " + path));
  KIMI_RETURN_IF_ERROR(Exec(db, "PRAGMA foreign_keys=ON").WithContext("database " + path));
  KIMI_RETURN_IF_ERROR(Exec(db,
                            "CREATE TABLE IF NOT EXISTS schema_migrations("
                            " component TEXT NOT NULL,"
                            " version INTEGER NOT NULL,"
                            " name TEXT NOT NULL,"
                            " sql TEXT NOT NULL,"
                            " applied_at TEXT NOT NULL,"
                            " PRIMARY KEY(component, version))")
                           .WithContext("database " + path));
  if (!marker_present) {
    const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno != EEXIST) return Status::IOError("cannot create " + marker + ": " + std::strerror(errno));
    if (fd >= 0) ::close(fd);
  }
  return store;
}

Store::~Store() { Close(); }

Result<int> Store::Migrate(std::span<const Migration> migrations) {
  KIMI_RETURN_IF_ERROR(CheckList(migrations));
  std::lock_guard<std::mutex> lock(mu_);
  if (db_ == nullptr) return Status::FailedPrecondition("database is closed");
  KIMI_ASSIGN_OR_RETURN(auto applied, ReadApplied(db_));
  for (const auto& [key, row] : applied) {
    const Migration* known = nullptr;
    for (const Migration& m : migrations) {
      if (m.component == key.first && m.version == key.second) known = &m;
    }
    std::string name = key.first + "/" + std::to_string(key.second);
    if (known == nullptr) {
      return Status::FailedPrecondition("database " + path_ + " has migration " + name +
                                        ", which this binary does not know: it was written by a newer version");
    }
    if (known->sql != row.sql) {
      return Status::FailedPrecondition("migration " + name + " in database " + path_ +
                                        " differs from this binary's: migrations must not change once released");
    }
  }
  int count = 0;
  for (const Migration& m : migrations) {
    if (applied.count({std::string(m.component), m.version})) continue;
    Status s = InTransaction(db_, [&m](sqlite3* db) {
      KIMI_RETURN_IF_ERROR(Exec(db, m.sql));
      return RecordApplied(db, m);
    });
    if (!s.ok()) return s.WithContext("migration " + Name(m) + " (" + std::string(m.name) + ")");
    ++count;
  }
  return count;
}

Status Store::Write(const std::function<Status(sqlite3*)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (db_ == nullptr) return Status::FailedPrecondition("database is closed");
  return InTransaction(db_, fn);
}

Status Store::Read(const std::function<Status(sqlite3*)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (db_ == nullptr) return Status::FailedPrecondition("database is closed");
  return fn(db_);
}

Status Store::QuickCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  if (db_ == nullptr) return Status::FailedPrecondition("database is closed");
  KIMI_ASSIGN_OR_RETURN(std::string result, QueryText(db_, "PRAGMA quick_check"));
  if (result != "ok") return Status::Corruption("database " + path_ + ": quick_check: " + result);
  return Status::OK();
}

Status Store::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (db_ == nullptr) return Status::OK();
  // A checkpoint folds the WAL into the main file so a closed database is one file.
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return SqliteError(db_, "closing database " + path_);  // statements left open: a bug
  db_ = nullptr;
  return Status::OK();
}

}  // namespace kimi::store
