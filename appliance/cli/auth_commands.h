// `kimictl admin bootstrap`, `kimictl key ...`, `kimictl role limits`, `kimictl user ...`, `kimictl tls selfsigned`: the identity commands,
// working directly on the data directory's database (appliance.db and auth-secret.key), so
// they run with or without the daemon (SQLite WAL; the daemon sees a revocation at the next
// request). Each change writes its auth event to the outbox the daemon moves into the audit
// log (auth/audit_outbox.h).
//
// Secrets (an API key, a one-time password) are printed once, alone on stdout, so a script
// can capture them; everything else goes to stderr.
//
// The data directory: --data-dir, else the storage.data_dir of --config, else
// $KIMI_DATA_DIR, else /var/lib/kimi-appliance. --config also supplies the auth section
// (Argon2id parameters, password rules).
// Only admin bootstrap and key create create the database in a fresh data directory; the
// other commands refuse a directory without one (cli/appliance_store.h).
//
// Thread safety: single-threaded, like kimictl.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"

namespace kimi::cli {

int RunAdminBootstrap(const std::vector<std::string>& args, const Io& io);
int RunKeyCreate(const std::vector<std::string>& args, const Io& io);
int RunKeyList(const std::vector<std::string>& args, const Io& io);
int RunKeyRevoke(const std::vector<std::string>& args, const Io& io);
// `kimictl key rotate KEY_ID --grace N[s|m|h|d]`: a new secret for the key (printed once, on
// stdout); the old one keeps working for the grace period (at most 7 days; 0: refused at once).
int RunKeyRotate(const std::vector<std::string>& args, const Io& io);
// `kimictl key update KEY_ID [--role R] [--models A,B|'*'] [--rpm N ...]`: the same edit as
// PATCH /admin/v1/keys/{id}, written directly (the daemon reads a key's row at each request,
// so it applies from the key's next request, with or without the daemon). Which model names
// exist is known only to the running daemon, so kimictl does not check them; the admin API does.
int RunKeyUpdate(const std::vector<std::string>& args, const Io& io);
// `kimictl role limits [ROLE] [--rpm N ...]`: prints each role's limits (or ROLE's); with limit
// options, sets ROLE's first. The daemon holds role limits in memory, so while it runs a set
// is refused with exit 3 and the admin API call to use (POST /admin/v1/roles/ROLE/limits);
// printing works beside it.
int RunRoleLimits(const std::vector<std::string>& args, const Io& io);
int RunUserAdd(const std::vector<std::string>& args, const Io& io);
int RunUserList(const std::vector<std::string>& args, const Io& io);
// Disables the user, ends its sessions and revokes every API key it owns.
int RunUserDisable(const std::vector<std::string>& args, const Io& io);
// Lets a disabled user log in again; the keys revoked when it was disabled stay revoked.
int RunUserEnable(const std::vector<std::string>& args, const Io& io);
// Clears the user's consecutive failed logins and its lock.
int RunUserUnlock(const std::vector<std::string>& args, const Io& io);
// A new one-time password for the user (printed once, on stdout), to be changed at the next
// sign-in; clears its lock and ends its sessions.
int RunUserResetPassword(const std::vector<std::string>& args, const Io& io);
// `kimictl tls selfsigned`: a P-256 key and self-signed certificate in <data_dir>/tls
// (or --dir), for server.tls; prints the certificate's path on stdout.
int RunTlsSelfSigned(const std::vector<std::string>& args, const Io& io);

}  // namespace kimi::cli
