#include "cli/auth_commands.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "audit/audit_text.h"
#include "audit/record.h"
#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/lifecycle_state.h"
#include "auth/self_signed_certificate.h"
#include "auth/server_secret.h"
#include "cli/appliance_store.h"
#include "config/config.h"
#include "kimi/utc_time.h"
#include "models/model_store.h"
#include "store/store.h"

namespace kimi::cli {
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr int kDaemonOwns = 3;  // the running daemon holds the state: act through its admin API

// Options every identity command takes.
struct Common {
  std::string data_dir;
  std::string config_path;
};

// An open database with the authenticator on it.
struct Opened {
  std::unique_ptr<store::Store> db;
  std::unique_ptr<auth::AuthStore> store;
  std::unique_ptr<auth::Authenticator> auth;
};

int Fail(const char* command, const Status& status, const Io& io) {
  std::fprintf(io.err, "kimictl %s: %s\n", command, audit::ShownText(status.message()).c_str());
  return kFailed;
}

// The data directory (see the header), with the configuration it came from.
Result<std::string> ResolveDataDir(const Common& common, config::AppConfig* cfg) {
  if (!common.config_path.empty()) {
    KIMI_ASSIGN_OR_RETURN(*cfg, config::LoadConfigFile(common.config_path, {}));
  }
  std::string data_dir = common.data_dir;
  if (data_dir.empty() && !common.config_path.empty()) data_dir = cfg->storage.data_dir;
  if (data_dir.empty()) {
    const char* env = std::getenv("KIMI_DATA_DIR");
    data_dir = env != nullptr && *env != '\0' ? env : config::StorageConfig{}.data_dir;
  }
  return data_dir;
}

// `mode`: kCreate only for a command whose job is to set a fresh data directory up
// (cli/appliance_store.h); every other one refuses a directory without a store.
Result<Opened> Open(const Common& common, StoreMode mode) {
  config::AppConfig cfg;
  KIMI_ASSIGN_OR_RETURN(std::string data_dir, ResolveDataDir(common, &cfg));
  Opened out;
  KIMI_ASSIGN_OR_RETURN(out.db, OpenApplianceStore(data_dir, mode));
  out.store = std::make_unique<auth::AuthStore>(out.db.get());
  KIMI_ASSIGN_OR_RETURN(int64_t credentials, out.store->HashedCredentials());
  KIMI_ASSIGN_OR_RETURN(auth::ServerSecret secret, auth::ServerSecret::LoadOrCreate(data_dir, credentials));
  auth::AuthOptions options;
  options.password.ops_limit = static_cast<uint64_t>(cfg.auth.argon2_ops_limit);
  options.password.mem_limit_bytes = static_cast<uint64_t>(cfg.auth.argon2_mem_limit_kib) * 1024;
  options.password.min_length = cfg.auth.password_min_length;
  options.max_concurrent_password_hashes = cfg.auth.max_concurrent_password_hashes;
  out.auth = std::make_unique<auth::Authenticator>(out.store.get(), secret, options);
  return out;
}

// kimictl acts as the local operator who can read the data directory, for the system
// principal (the owner of the keys it makes without --owner).
auth::Actor LocalActor() {
  const passwd* pw = ::getpwuid(::geteuid());
  return auth::Actor{std::string("kimictl:") + (pw ? pw->pw_name : std::to_string(::geteuid())), "system", "local"};
}

std::string TimeOrDash(int64_t ms) { return ms == 0 ? "-" : FormatUtcMillis(ms); }

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<auth::Role> ParseRoleOption(const std::string& name) {
  std::optional<auth::Role> role = auth::ParseRole(name);
  if (!role) return Status::InvalidArgument("--role must be admin, operator, auditor, user or scrape, got '" + name + "'");
  return *role;
}

// The limit options (kKeyLimitFields' flags) given, each parsed into its slot of *values;
// false with a usage line on err when one is not a non-negative integer.
bool ParseLimitOptions(const char* command, const std::string* texts, auth::KeyChange* values, const Io& io) {
  for (size_t i = 0; i < std::size(auth::kKeyLimitFields); ++i) {
    if (texts[i].empty()) continue;
    char* end = nullptr;
    int64_t value = std::strtoll(texts[i].c_str(), &end, 10);
    if (*end != '\0' || value < 0) {
      std::fprintf(io.err, "kimictl %s: %s must be a non-negative integer\n", command,
                   std::string(auth::kKeyLimitFields[i].flag).c_str());
      return false;
    }
    values->limits[i] = value;
  }
  return true;
}

// Adds the limit options (--rpm N ...) to `specs`, each writing its text into texts[i].
void AddLimitOptions(std::vector<OptionSpec>* specs, std::string* texts) {
  for (size_t i = 0; i < std::size(auth::kKeyLimitFields); ++i) specs->push_back({auth::kKeyLimitFields[i].flag, &texts[i]});
}

// "requests_per_minute=60 tokens_per_minute=0 ...": every limit, for listings.
std::string LimitsText(const auth::KeyLimits& limits) {
  std::string out;
  for (const auth::KeyLimitField& f : auth::kKeyLimitFields) {
    out += (out.empty() ? "" : " ") + std::string(f.name) + "=" + std::to_string(limits.*f.member);
  }
  return out;
}

}  // namespace

int RunAdminBootstrap(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string username = "admin";
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--username", &username}};
  if (!ParseOptions("admin bootstrap", args, specs, io)) return kUsage;
  Result<Opened> opened = Open(c, StoreMode::kCreate);
  if (!opened.ok()) return Fail("admin bootstrap", opened.status(), io);
  Result<std::string> one_time = opened->auth->Bootstrap(LocalActor(), username);
  if (!one_time.ok()) return Fail("admin bootstrap", one_time.status(), io);
  std::fprintf(io.err,
               "kimictl admin bootstrap: created admin user '%s'. Its one-time password follows; it is shown only "
               "now and must be changed at the first login (POST /admin/v1/session, then /admin/v1/session/password).\n",
               username.c_str());
  std::fprintf(io.out, "%s\n", one_time->c_str());
  return kOk;
}

int RunKeyCreate(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string name, role_name, owner, models, expires;
  std::string limit_text[std::size(auth::kKeyLimitFields)];
  std::vector<OptionSpec> specs = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--name", &name},
                                   {"--role", &role_name},      {"--owner", &owner},          {"--models", &models},
                                   {"--expires", &expires}};
  AddLimitOptions(&specs, limit_text);
  if (!ParseOptions("key create", args, specs, io)) return kUsage;
  if (name.empty() || role_name.empty()) {
    std::fprintf(io.err, "kimictl key create: --name and --role are required\n");
    return kUsage;
  }
  Result<auth::Role> role = ParseRoleOption(role_name);
  if (!role.ok()) return Fail("key create", role.status(), io);
  auth::NewKey spec{name, owner, *role, SplitComma(models), 0};
  if (!expires.empty()) {
    Result<int64_t> ms = auth::ParseKeyExpiry(expires, UnixMillisNow());
    if (!ms.ok()) return Fail("key create", ms.status().WithContext("--expires"), io);
    spec.expires_ms = *ms;
  }
  auth::KeyChange limits;
  if (!ParseLimitOptions("key create", limit_text, &limits, io)) return kUsage;
  spec.limits = auth::ApplyLimitChange(auth::KeyLimits{}, limits);
  Result<Opened> opened = Open(c, StoreMode::kCreate);
  if (!opened.ok()) return Fail("key create", opened.status(), io);
  Result<auth::CreatedKey> created = opened->auth->CreateKey(LocalActor(), spec);
  if (!created.ok()) return Fail("key create", created.status(), io);
  std::fprintf(io.err, "kimictl key create: created %s (name %s, role %s, owner %s, expires %s); the key follows and is shown only now\n",
               created->record.id.c_str(), audit::ShownText(name).c_str(), created->record.role.c_str(),
               audit::ShownText(created->record.owner).c_str(),
               TimeOrDash(spec.expires_ms).c_str());
  std::fprintf(io.out, "%s\n", created->secret.c_str());
  return kOk;
}

int RunKeyList(const std::vector<std::string>& args, const Io& io) {
  Common c;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  if (!ParseOptions("key list", args, specs, io)) return kUsage;
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("key list", opened.status(), io);
  Result<std::vector<auth::KeyRecord>> keys = opened->auth->ListKeys();
  if (!keys.ok()) return Fail("key list", keys.status(), io);
  std::fprintf(io.out, "%-20s %-9s %-14s %-24s %-24s %-24s %s\n", "ID", "ROLE", "STATE", "EXPIRES", "LAST USED",
               "OWNER", "NAME");
  const int64_t now = UnixMillisNow();
  for (const auth::KeyRecord& k : *keys) {
    std::string models;
    for (const std::string& m : k.models) models += (models.empty() ? " models=" : ",") + audit::ShownText(m);
    std::fprintf(io.out, "%-20s %-9s %-14s %-24s %-24s %-24s %s%s\n", k.id.c_str(), k.role.c_str(),
                 std::string(auth::KeyStateName(auth::KeyStateOf(k, now))).c_str(), TimeOrDash(k.expires_ms).c_str(),
                 TimeOrDash(k.last_used_ms).c_str(), audit::ShownText(k.owner).c_str(), audit::ShownText(k.name).c_str(),
                 models.c_str());
  }
  return kOk;
}

int RunKeyRevoke(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string id;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  if (!ParseOptions("key revoke", args, specs, io, &id)) return kUsage;
  if (id.empty()) {
    std::fprintf(io.err, "kimictl key revoke: name the key: kimictl key revoke KEY_ID\n");
    return kUsage;
  }
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("key revoke", opened.status(), io);
  Status revoked = opened->auth->RevokeKey(LocalActor(), id);
  if (!revoked.ok()) return Fail("key revoke", revoked, io);
  std::fprintf(io.out, "revoked %s\n", audit::ShownText(id).c_str());
  return kOk;
}

namespace {

// "90", "90s", "15m", "2h", "7d" -> milliseconds; nullopt when malformed.
std::optional<int64_t> ParseGrace(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int64_t unit_ms = 1000;
  std::string digits = text;
  switch (text.back()) {
    case 's': digits.pop_back(); break;
    case 'm': unit_ms = 60'000; digits.pop_back(); break;
    case 'h': unit_ms = 3'600'000; digits.pop_back(); break;
    case 'd': unit_ms = 86'400'000; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(digits) * unit_ms;
}

}  // namespace

int RunKeyRotate(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string id, grace;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--grace", &grace}};
  if (!ParseOptions("key rotate", args, specs, io, &id)) return kUsage;
  std::optional<int64_t> grace_ms = ParseGrace(grace);
  if (id.empty() || !grace_ms) {
    std::fprintf(io.err, "kimictl key rotate: usage: kimictl key rotate KEY_ID --grace N[s|m|h|d] (at most 7d; 0: the "
                         "old secret is refused at once)\n");
    return kUsage;
  }
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("key rotate", opened.status(), io);
  Result<auth::CreatedKey> rotated = opened->auth->RotateKey(LocalActor(), id, *grace_ms);
  if (!rotated.ok()) return Fail("key rotate", rotated.status(), io);
  std::fprintf(io.err,
               "kimictl key rotate: %s has a new secret, which follows and is shown only now; the old one is "
               "accepted until %s\n",
               id.c_str(), *grace_ms == 0 ? "now (refused already)" : FormatUtcMillis(rotated->record.previous_expires_ms).c_str());
  std::fprintf(io.out, "%s\n", rotated->secret.c_str());
  return kOk;
}

int RunKeyUpdate(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string id, role_name, models;
  std::string limit_text[std::size(auth::kKeyLimitFields)];
  std::vector<OptionSpec> specs = {
      {"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--role", &role_name}, {"--models", &models}};
  AddLimitOptions(&specs, limit_text);
  if (!ParseOptions("key update", args, specs, io, &id)) return kUsage;
  auth::KeyChange change;
  if (id.empty() || !ParseLimitOptions("key update", limit_text, &change, io)) {
    std::fprintf(io.err, "kimictl key update: usage: kimictl key update KEY_ID [--role ROLE] [--models A,B|'*'] "
                         "[limit options]\n");
    return kUsage;
  }
  if (!role_name.empty()) {
    Result<auth::Role> role = ParseRoleOption(role_name);
    if (!role.ok()) return Fail("key update", role.status(), io);
    change.role = *role;
  }
  if (!models.empty()) change.models = models == "*" ? std::vector<std::string>{} : SplitComma(models);
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("key update", opened.status(), io);
  Result<auth::KeyRecord> updated = opened->auth->UpdateKey(LocalActor(), id, change);
  if (!updated.ok()) return Fail("key update", updated.status(), io);
  std::string allowed;
  // Model names an upstream's model list may have given, as in `key list`.
  for (const std::string& m : updated->models) allowed += (allowed.empty() ? "" : ",") + audit::ShownText(m);
  std::fprintf(io.out, "updated %s: role %s; models %s; %s\n", id.c_str(), updated->role.c_str(),
               allowed.empty() ? "*" : allowed.c_str(), LimitsText(updated->limits).c_str());
  return kOk;
}

int RunRoleLimits(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string role_name;
  std::string limit_text[std::size(auth::kKeyLimitFields)];
  std::vector<OptionSpec> specs = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  AddLimitOptions(&specs, limit_text);
  if (!ParseOptions("role limits", args, specs, io, &role_name)) return kUsage;
  auth::KeyChange change;
  if (!ParseLimitOptions("role limits", limit_text, &change, io)) return kUsage;
  std::optional<auth::Role> only;
  if (!role_name.empty()) {
    Result<auth::Role> role = ParseRoleOption(role_name);
    if (!role.ok()) return Fail("role limits", role.status(), io);
    only = *role;
  }
  if (!change.empty()) {
    if (!only) {
      std::fprintf(io.err, "kimictl role limits: name the role whose limits to set: kimictl role limits ROLE --rpm N ...\n");
      return kUsage;
    }
    // The daemon holds the role limits in memory (loaded at its start): a change written
    // beside it would not apply until its restart, so it must go through the daemon.
    config::AppConfig cfg;
    Result<std::string> data_dir = ResolveDataDir(c, &cfg);
    if (!data_dir.ok()) return Fail("role limits", data_dir.status(), io);
    if (std::optional<std::string> pid = models::ModelStoreOwner(*data_dir)) {
      std::fprintf(io.err,
                   "kimictl role limits: kimi-appliance (pid %s) is running and holds the role limits; while it "
                   "runs, use:\n  POST /admin/v1/roles/%s/limits (the same fields as for a key, JSON)\n",
                   pid->c_str(), role_name.c_str());
      return kDaemonOwns;
    }
  }
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("role limits", opened.status(), io);
  if (!change.empty()) {
    Result<auth::KeyLimits> set = opened->auth->UpdateRoleLimits(LocalActor(), *only, change);
    if (!set.ok()) return Fail("role limits", set.status(), io);
  }
  std::map<auth::Role, auth::KeyLimits> limits = opened->auth->RoleLimits();
  for (auth::Role role : auth::AllRoles()) {
    if (only && role != *only) continue;
    std::fprintf(io.out, "%-9s %s\n", std::string(auth::RoleName(role)).c_str(), LimitsText(limits[role]).c_str());
  }
  return kOk;
}

int RunUserAdd(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string username, role_name;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--role", &role_name}};
  if (!ParseOptions("user add", args, specs, io, &username)) return kUsage;
  if (username.empty() || role_name.empty()) {
    std::fprintf(io.err, "kimictl user add: usage: kimictl user add USERNAME --role ROLE\n");
    return kUsage;
  }
  Result<auth::Role> role = ParseRoleOption(role_name);
  if (!role.ok()) return Fail("user add", role.status(), io);
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("user add", opened.status(), io);
  Result<std::string> one_time = opened->auth->AddUser(LocalActor(), username, *role);
  if (!one_time.ok()) return Fail("user add", one_time.status(), io);
  std::fprintf(io.err, "kimictl user add: created '%s' (role %s); the one-time password follows, shown only now\n",
               audit::ShownText(username).c_str(), role_name.c_str());
  std::fprintf(io.out, "%s\n", one_time->c_str());
  return kOk;
}

int RunUserList(const std::vector<std::string>& args, const Io& io) {
  Common c;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  if (!ParseOptions("user list", args, specs, io)) return kUsage;
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("user list", opened.status(), io);
  Result<std::vector<auth::UserRecord>> users = opened->auth->ListUsers();
  if (!users.ok()) return Fail("user list", users.status(), io);
  std::fprintf(io.out, "%-24s %-9s %-19s %-24s %s\n", "USER", "ROLE", "STATE", "LAST LOGIN", "LOCKED UNTIL");
  const int64_t now = UnixMillisNow();
  for (const auth::UserRecord& u : *users) {
    const std::string state(auth::UserStateName(auth::UserStateOf(u, now)));
    std::fprintf(io.out, "%-24s %-9s %-19s %-24s %s\n", audit::ShownText(u.username).c_str(), u.role.c_str(), state.c_str(),
                 TimeOrDash(u.last_login_ms).c_str(), TimeOrDash(u.locked_until_ms).c_str());
  }
  return kOk;
}

namespace {

// kimictl user disable|enable|unlock USERNAME: `act` on the user, then `done` and its name.
int ActOnUser(const char* command, const std::vector<std::string>& args, const Io& io,
              Status (auth::Authenticator::*act)(const auth::Actor&, const std::string&), const char* done) {
  Common c;
  std::string username;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  if (!ParseOptions(command, args, specs, io, &username)) return kUsage;
  if (username.empty()) {
    std::fprintf(io.err, "kimictl %s: usage: kimictl %s USERNAME\n", command, command);
    return kUsage;
  }
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail(command, opened.status(), io);
  Status acted = ((*opened->auth).*act)(LocalActor(), username);
  if (!acted.ok()) return Fail(command, acted, io);
  std::fprintf(io.out, "%s %s\n", done, audit::ShownText(username).c_str());
  return kOk;
}

}  // namespace

int RunUserDisable(const std::vector<std::string>& args, const Io& io) {
  return ActOnUser("user disable", args, io, &auth::Authenticator::DisableUser, "disabled");
}

int RunUserEnable(const std::vector<std::string>& args, const Io& io) {
  return ActOnUser("user enable", args, io, &auth::Authenticator::EnableUser, "enabled");
}

int RunUserUnlock(const std::vector<std::string>& args, const Io& io) {
  return ActOnUser("user unlock", args, io, &auth::Authenticator::UnlockUser, "unlocked");
}

int RunUserResetPassword(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string username;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}};
  if (!ParseOptions("user reset-password", args, specs, io, &username)) return kUsage;
  if (username.empty()) {
    std::fprintf(io.err, "kimictl user reset-password: usage: kimictl user reset-password USERNAME\n");
    return kUsage;
  }
  Result<Opened> opened = Open(c, StoreMode::kOpenExisting);
  if (!opened.ok()) return Fail("user reset-password", opened.status(), io);
  Result<std::string> one_time = opened->auth->ResetPassword(LocalActor(), username);
  if (!one_time.ok()) return Fail("user reset-password", one_time.status(), io);
  std::fprintf(io.err,
               "kimictl user reset-password: '%s' has a new one-time password, which follows and is shown only now; "
               "it must be changed at the next sign-in, and every session of the user has ended\n",
               username.c_str());
  std::fprintf(io.out, "%s\n", one_time->c_str());
  return kOk;
}

int RunTlsSelfSigned(const std::vector<std::string>& args, const Io& io) {
  Common c;
  std::string dir, names, common_name = "kimi-appliance", days = "825";
  bool overwrite = false;
  const OptionSpec specs[] = {{"--data-dir", &c.data_dir}, {"--config", &c.config_path}, {"--dir", &dir},
                              {"--names", &names},         {"--cn", &common_name},       {"--days", &days},
                              {"--force", nullptr, &overwrite}};
  if (!ParseOptions("tls selfsigned", args, specs, io)) return kUsage;
  if (dir.empty()) {
    config::AppConfig cfg;
    Result<std::string> data_dir = ResolveDataDir(c, &cfg);
    if (!data_dir.ok()) return Fail("tls selfsigned", data_dir.status(), io);
    dir = *data_dir + "/tls";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail("tls selfsigned", Status::IOError("cannot create " + dir + ": " + ec.message()), io);
  auth::SelfSignedSpec spec;
  spec.cert_path = dir + "/cert.pem";
  spec.key_path = dir + "/key.pem";
  spec.common_name = common_name;
  spec.names = SplitComma(names);
  spec.overwrite = overwrite;
  char* end = nullptr;
  spec.valid_days = std::strtoll(days.c_str(), &end, 10);
  if (days.empty() || *end != '\0') return Fail("tls selfsigned", Status::InvalidArgument("--days must be a number"), io);
  Status written = auth::WriteSelfSignedCertificate(spec);
  if (!written.ok()) return Fail("tls selfsigned", written, io);
  std::string san;
  for (const std::string& e : auth::SubjectAltNames(spec.names)) san += (san.empty() ? "" : ", ") + e;
  std::fprintf(io.err,
               "kimictl tls selfsigned: wrote %s (certificate, valid %lld days; %s) and %s (private key, mode 0600).\n"
               "Serve HTTPS with: \"server\": {\"tls\": {\"cert_file\": \"%s\", \"key_file\": \"%s\"}}\n"
               "Clients trust it by using the certificate file as their CA bundle.\n",
               spec.cert_path.c_str(), static_cast<long long>(spec.valid_days), san.c_str(), spec.key_path.c_str(),
               spec.cert_path.c_str(), spec.key_path.c_str());
  std::fprintf(io.out, "%s\n", spec.cert_path.c_str());
  return kOk;
}

}  // namespace kimi::cli
