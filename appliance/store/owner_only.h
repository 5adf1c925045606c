// Owner-only files: everything in the data directory (audit.db, appliance.db with the keys,
// users and sessions, their -wal and -shm files, the audit and server keys, the model store)
// is readable and writable by the service account alone (0600, directories 0700).
//
// New files get that mode where they are made: the daemon runs with umask 077, and the two
// databases are created here with 0600 before SQLite opens them (SQLite gives a database's
// -wal and -shm files the database's own mode, so they follow). Files that an older version
// or another tool left looser are tightened when the daemon starts (RestrictTreeToOwner) and
// whenever a database is opened for writing.
//
// Symbolic links are never followed or changed: a link planted in the data directory cannot
// turn a chmod onto a file elsewhere.
// Public header of store/: other folders include it.
// Thread safety: functions of the file system only; call them before other threads use the
// files.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kimi/status.h"

namespace kimi::store {

// Creates db_path empty with mode 0600 unless it exists, then removes group and other
// permissions from it and from its SQLite companions (-wal, -shm, -journal) where they exist.
Status PrepareOwnerOnlyDatabase(const std::string& db_path);

// Removes group and other permissions from dir and every file and directory below it, but the
// paths in left_as_found: secrets whose own check refuses them when they were readable by
// others (they may have been copied). Returns the paths whose mode changed (empty when dir does
// not exist).
Result<std::vector<std::string>> RestrictTreeToOwner(const std::string& dir,
                                                     std::span<const std::string> left_as_found = {});

}  // namespace kimi::store
