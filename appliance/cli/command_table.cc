// kimictl's subcommands, one line each. Keep the list sorted by path.
#include "cli/audit_commands.h"
#include "cli/auth_commands.h"
#include "cli/commands.h"
#include "cli/model_commands.h"
#include "cli/model_lifecycle_commands.h"
#include "cli/stdio_adapter.h"

namespace kimi::cli {
namespace {

const Command kCommands[] = {
    {"admin bootstrap", "[--username NAME] [--data-dir DIR] [--config PATH]",
     "create the first admin user; prints its one-time password once", &RunAdminBootstrap},
    {"audit consistency", "OLD_SIZE [--data-dir DIR]", "print a consistency proof from OLD_SIZE to the newest signed head",
     &OnStdio<RunAuditConsistency>},
    {"audit export", "--format jsonl|csv|bundle [--since T] [--until T] [--data-dir DIR]",
     "export audit records with the signed heads that cover them", &OnStdio<RunAuditExport>},
    {"audit head", "[--data-dir DIR]", "print the newest signed tree head", &OnStdio<RunAuditHead>},
    {"audit list",
     "[--outcome O] [--action A] [--actor A] [--request-id ID] [--since T] [--until T] [--limit N] [--data-dir DIR]",
     "list audit records as JSON lines (--outcome interrupted: streams the daemon cut short)", &OnStdio<RunAuditList>},
    {"audit prove", "SEQ [--data-dir DIR]", "print an inclusion proof of record SEQ", &OnStdio<RunAuditProve>},
    {"audit verify", "[--head KEPT_HEADS.jsonl] [--export BUNDLE.jsonl [--public-key KEY]] [--data-dir DIR]",
     "recompute the Merkle tree and check every signed head, or check an export bundle",
     &OnStdio<RunAuditVerify>},
    {"audit witness", "[--append WITNESS.jsonl | --out HEAD.json] [--public-key KEY] [--data-dir DIR]",
     "verify the log, then hand out its newest signed head for an auditor to keep", &OnStdio<RunAuditWitness>},
    {"config check", "[--config PATH]", "validate a configuration file (same checks as the daemon)", &RunConfigCheck},
    {"config defaults", "", "print a configuration with every key at its default", &RunConfigDefaults},
    {"key create",
     "--name NAME --role ROLE [--owner USER|system|installer] [--models A,B] [--expires T] [--rpm N] [--tpm N] [--tokens-per-day N] "
     "[--tokens-per-month N] [--max-streams N] [--data-dir DIR]",
     "create an API key; prints it once", &RunKeyCreate},
    {"key list", "[--data-dir DIR]", "list API keys (never their secrets)", &RunKeyList},
    {"key rotate", "KEY_ID --grace N[s|m|h|d] [--data-dir DIR]",
     "give an API key a new secret (printed once); the old one works for the grace period (at most 7d)",
     &RunKeyRotate},
    {"key revoke", "KEY_ID [--data-dir DIR]", "revoke an API key; refused from the next request on", &RunKeyRevoke},
    {"key update",
     "KEY_ID [--role ROLE] [--models A,B|'*'] [--rpm N] [--tpm N] [--tokens-per-day N] [--tokens-per-month N] "
     "[--max-streams N] [--data-dir DIR]",
     "change an API key's role, allowed models or limits, from its next request on", &RunKeyUpdate},
    {"keygen", "[--out PREFIX] [--force]", "make an ECDSA P-256 key pair for signing models", &OnStdio<RunKeygen>},
    {"model activate", "[--data-dir DIR] [--trust-dir DIR] [--force] MODEL DIGEST",
     "re-verify an installed version and make it the active one (blue-green)", &OnStdio<RunModelActivate>},
    {"model import", "--id MODEL [--data-dir DIR] [--trust-dir DIR] [--ignore PATH]... [--quiet] SOURCE_DIR",
     "copy a signed model into the model store and verify the copy", &OnStdio<RunModelImport>},
    {"model list", "[--data-dir DIR] [--all] [--json]", "list installed model versions and their states",
     &OnStdio<RunModelList>},
    {"model remove", "[--data-dir DIR] MODEL DIGEST", "delete an installed version that is not active",
     &OnStdio<RunModelRemove>},
    {"model rollback", "[--data-dir DIR] [--trust-dir DIR] MODEL", "make the previously active version active again",
     &OnStdio<RunModelRollback>},
    {"model sign", "--key KEY.pem [--certificate CHAIN.pem] [--ignore PATH]... MODEL_DIR",
     "write MODEL_DIR/model.sig (OpenSSF Model Signing), naming the key or its certificate chain",
     &OnStdio<RunModelSign>},
    {"model verify", "[--key PUB.pem]... [--ca CA.pem]... [--trust-dir DIR] MODEL_DIR",
     "verify a model's signature and every file's digest", &OnStdio<RunModelVerify>},
    {"model verify-installed", "[--data-dir DIR] [--trust-dir DIR] MODEL [DIGEST]",
     "re-verify installed versions (detects tampering after import)", &OnStdio<RunModelVerifyInstalled>},
    {"role limits",
     "[ROLE [--rpm N] [--tpm N] [--tokens-per-day N] [--tokens-per-month N] [--max-streams N]] [--data-dir DIR]",
     "print the roles' limits, or set ROLE's (only while kimi-appliance is stopped)", &RunRoleLimits},
    {"tls selfsigned", "[--data-dir DIR | --dir DIR] [--names HOST,IP,...] [--cn NAME] [--days N] [--force]",
     "make a P-256 key and a self-signed certificate for server.tls (localhost, 127.0.0.1, ::1 and --names)",
     &RunTlsSelfSigned},
    {"user add", "USERNAME --role ROLE [--data-dir DIR]", "add a console user; prints a one-time password once",
     &RunUserAdd},
    {"user disable", "USERNAME [--data-dir DIR]", "disable a console user, end its sessions and revoke its API keys",
     &RunUserDisable},
    {"user enable", "USERNAME [--data-dir DIR]", "let a disabled console user log in again (its keys stay revoked)",
     &RunUserEnable},
    {"user list", "[--data-dir DIR]", "list console users", &RunUserList},
    {"user reset-password", "USERNAME [--data-dir DIR]",
     "issue a new one-time password (printed once) and end the user's sessions", &RunUserResetPassword},
    {"user unlock", "USERNAME [--data-dir DIR]", "clear a console user's failed logins and lock", &RunUserUnlock},
    {"version", "", "print kimictl's version and build", &RunVersion},
};

}  // namespace

std::span<const Command> CommandTable() { return kCommands; }

}  // namespace kimi::cli
