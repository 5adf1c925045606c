// Helpers shared by the audit tests: a temporary directory, sample records, a small log
// built through the real sink. Test-only.
// Public header of audit/: the tests of other folders use it too.
// Thread safety: TempDir is owned by one test; the functions are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "audit/audit_sink.h"
#include "audit/record.h"
#include "audit/signed_head.h"

struct sqlite3;

namespace kimi::audit::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Every record of <dir>/audit.db, in order, read through a read-only store (a failure is a test
// failure and an empty list).
std::vector<AuditRecord> RecordsIn(const std::string& dir);

// A plausible API request record, distinct for each i.
AuditRecord SampleRecord(int i);

// Options for a sink in dir with a deterministic clock and no timed signing.
AuditSinkOptions TestSinkOptions(const std::string& dir);

// Writes `count` sample records through a sink in dir, signing a head after each size listed
// in head_sizes (sizes ascending), then closes the sink (which signs a final head if needed).
// Returns the public key.
PublicKey BuildLog(const std::string& dir, int count, const std::vector<uint64_t>& head_sizes);

// Runs $KIMI_BUILD_DIR/appliance/audit/kimi-audit-verify with args; returns its exit status,
// -1 when KIMI_BUILD_DIR is unset (callers skip then) or it did not exit.
int RunStandaloneVerifier(const std::string& args);

// Runs SQL on the database file directly, as someone with file access would.
void TamperSql(const std::string& db_path, const std::string& sql);

// Writes r as row r.seq (replacing a row there) with the leaf hash the writer would compute,
// and rewrites the writer's stored tree to match the rows: a forger with file access.
void ForgeRow(const std::string& db_path, AuditRecord r);

// Copies audit.db (with its write-ahead log) and the audit key from one directory to another:
// taken while a sink is open, the copy is the log as a crash (kill -9) would leave it.
void CopyLogFiles(const std::string& from_dir, const std::string& to_dir);
// Holds the write lock of the database at db_path (BEGIN EXCLUSIVE on a connection of its
// own), as another process can, until Release() or destruction: the sink's writes then fail.
class DatabaseWriteLock {
 public:
  explicit DatabaseWriteLock(const std::string& db_path);
  ~DatabaseWriteLock() { Release(); }
  DatabaseWriteLock(const DatabaseWriteLock&) = delete;
  DatabaseWriteLock& operator=(const DatabaseWriteLock&) = delete;
  void Release();

 private:
  sqlite3* db_ = nullptr;
};

// Polls cond for up to ~20 s; a bound against hanging, not a timing assertion.
bool Eventually(const std::function<bool()>& cond);

// Runs `work` in a forked child, which then dies by SIGKILL (no orderly shutdown) or exits 3
// when work returns false. True when the child died by SIGKILL.
bool RunThenKill9(const std::function<bool()>& work);

}  // namespace kimi::audit::testing
