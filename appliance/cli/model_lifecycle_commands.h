// kimictl's model lifecycle commands, operating on the model store in the data directory
// (models/model_store.h; docs/model-lifecycle.md):
//   kimictl model import --id MODEL [TRUST] [--ignore PATH]... [--threads N] [--quiet] SOURCE_DIR
//   kimictl model list [--all] [--json]
//   kimictl model activate [TRUST] [--force] MODEL DIGEST
//   kimictl model rollback [TRUST] MODEL
//   kimictl model remove MODEL DIGEST
//   kimictl model verify-installed [TRUST] MODEL [DIGEST]
// Every command takes --data-dir DIR (default $KIMI_DATA_DIR, else /var/lib/kimi-appliance).
// A DIR without an appliance database is refused, nothing created (cli/appliance_store.h).
// TRUST is --trust-dir DIR / --key PUB.pem / --ca CA.pem as for `model verify` (default
// /etc/kimi-appliance/trust). DIGEST may be a unique prefix of at least 8 hex digits.
// Acts are audited into the data directory's audit log as the invoking user. They need the
// store's lock: while kimi-appliance runs (it owns the store), import, activate, rollback and
// remove refuse, print the admin API call that does the same, and exit 3. list and
// verify-installed work beside it: list reads the database, verify-installed then checks the
// bytes as a reader and records nothing (a note on err says so).
// Return value: 0 success, 1 refused or failed (one "error: ..." line on err), 2 usage error,
// 3 the daemon owns the store.
//
// Thread safety: each call is independent; the streams are used from the calling thread only.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace kimi::cli {

int RunModelImport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelList(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelActivate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelRollback(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelRemove(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelVerifyInstalled(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kimi::cli
