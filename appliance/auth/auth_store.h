// AuthStore: the rows of the auth tables (auth_migrations.h), read and written through the
// daemon's Store (one connection, serialised writes). The key lookup of every request uses a
// statement prepared once (guarded, like the connection, by the Store's mutex). No policy lives here: the
// Authenticator decides, this class only reads and writes rows. Each mutating method runs in
// one transaction together with the auth event it is given (the audit outbox).
// Public header of auth/: other folders include it.
// Thread safety: every method may be called from any thread (the Store serialises them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "auth/key_limits.h"
#include "auth/list_query.h"
#include "auth/server_secret.h"
#include "audit/record.h"
#include "kimi/status.h"
#include "store/sql_statement.h"
#include "store/store.h"

namespace kimi::auth {

struct KeyRecord {
  std::string id;                   // "key_..."; public
  std::string name;
  std::string owner;                // a user name or a system principal (principal.h)
  std::string role;                 // roles.h name
  std::vector<std::string> models;  // allowed models; empty: every model
  int64_t created_ms = 0;
  int64_t expires_ms = 0;           // 0: never
  int64_t revoked_ms = 0;           // 0: not revoked
  int64_t last_used_ms = 0;
  int64_t previous_expires_ms = 0;  // a rotation's old secret works until then; 0: no old secret
  KeyLimits limits;
  bool owner_enabled = false;       // read, never written: the owner is a user that exists and is enabled
};

// What FindKeyByHash found: the key, and whether the hash was its previous secret's (the one
// its last rotation replaced), which works only until key.previous_expires_ms.
struct KeyMatch {
  KeyRecord key;
  bool previous_secret = false;
};

// A key's use in one UTC period (a day or a month), counted from finished generation requests.
struct PeriodUsage {
  int64_t period_start_ms = 0;
  int64_t requests = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t tokens() const { return prompt_tokens + completion_tokens; }
};

struct KeyUsage {
  PeriodUsage day;    // the UTC day containing the time asked about
  PeriodUsage month;  // the UTC month containing it
};

enum class UsagePeriod { kDay, kMonth };

// Requests and tokens to add to one of a key's usage rows.
struct UsageRowDelta {
  std::string key_id;
  UsagePeriod period = UsagePeriod::kDay;
  int64_t period_start_ms = 0;
  int64_t requests = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

struct UserRecord {
  std::string username;
  std::string password_hash;
  std::string role;
  bool disabled = false;
  bool must_change_password = false;
  int64_t failed_logins = 0;     // consecutive failures since the last success
  int64_t locked_until_ms = 0;
  int64_t created_ms = 0;
  int64_t last_login_ms = 0;
};

// What BeginLoginAttempt found.
struct LoginAttempt {
  enum class Refusal { kNone, kUnknownUser, kDisabled, kLocked };
  Refusal refusal = Refusal::kNone;
  UserRecord user;  // kNone: with this attempt counted (and the lock it set); else as read
};

struct SessionRecord {
  std::string username;
  std::string csrf_token;
  int64_t created_ms = 0;
  int64_t last_seen_ms = 0;
  // The deadlines the settings gave it: at login (absolute), and at its last use (idle). A
  // later, longer setting does not move them.
  int64_t ends_ms = 0;
  int64_t idle_ends_ms = 0;
};

// A session's row: the keyed hash of its id and what is kept with it.
struct StoredSession {
  Digest id_hash{};
  SessionRecord record;
};

// Which per-minute buckets (rate_limiter.h): a key's requests, or its prompt and completion tokens.
enum class BucketKind { kRequests, kTokens };

// One row of the outbox; becomes one audit record.
struct AuthEvent {
  int64_t id = 0;  // assigned by the database
  int64_t time_ms = 0;
  std::string actor;
  std::string role;
  std::string source;
  std::string action;   // "auth.login", "auth.login_failed", "auth.key_created", ...
  std::string target;   // key id or user name
  std::string outcome;  // "ok", "denied"
  std::string detail;
  // The whole record (audit::RecordToJson) of a change outside the auth tables; the fields
  // above then only describe it. "" for auth's own events.
  std::string record;
};

class AuthStore {
 public:
  explicit AuthStore(store::Store* store) : store_(store) {}
  ~AuthStore() { Close(); }
  AuthStore(const AuthStore&) = delete;
  AuthStore& operator=(const AuthStore&) = delete;

  // Finalises the statements kept prepared for the request path; call before the Store
  // closes (a connection with live statements does not close). Idempotent.
  void Close();

  // How many API keys and sessions are stored, each under a hash keyed with the server secret.
  Result<int64_t> HashedCredentials();
  Status InsertKey(const KeyRecord& key, const Digest& key_hash, const AuthEvent& event);
  // The key whose stored hash, or previous secret's hash, equals `key_hash` (compared again in
  // constant time), or nullopt.
  Result<std::optional<KeyMatch>> FindKeyByHash(const Digest& key_hash);
  // Keys oldest first; the search matches name, owner or id.
  Result<ListPage<KeyRecord>> ListKeys(const ListQuery& query);
  Result<std::vector<KeyRecord>> ListKeys();
  // Gives the key the secret hashed as `new_hash`; its current secret becomes the previous one,
  // valid until previous_until_ms (an earlier previous secret is dropped). NotFound for an
  // unknown id; FailedPrecondition when revoked or expired at now_ms. *out: the key as written.
  Status RotateKey(const std::string& id, const Digest& new_hash, int64_t now_ms, int64_t previous_until_ms,
                   const AuthEvent& event, KeyRecord* out);
  // NotFound for an unknown id; FailedPrecondition when already revoked.
  Status RevokeKey(const std::string& id, int64_t now_ms, const AuthEvent& event);
  Status TouchKeys(const std::map<std::string, int64_t>& last_used_ms);
  // Reads the key's row, lets `edit` change its role, models and limits and name the event,
  // then writes both, in one transaction, so that two concurrent edits cannot lose one.
  // NotFound for an unknown id; an error from `edit` rolls back. *out gets the row as written.
  Status EditKey(const std::string& id, const std::function<Result<AuthEvent>(KeyRecord*)>& edit, KeyRecord* out);

  // Usage (auth_store_usage.cc): adds one finished request and its tokens to the key's rows
  // of the day and the month starting at the given times.
  Status AddUsage(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms, int64_t prompt_tokens,
                  int64_t completion_tokens);
  // Adds each delta to its row (created when absent), all in one transaction.
  Status AddUsageRows(const std::vector<UsageRowDelta>& rows);
  // The rows for those periods (zeros when the key has none yet).
  Result<KeyUsage> ReadUsage(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms);
  // Every key's rows of `period` starting in [from_ms, to_ms), as written (the ledger's unwritten
  // part is at most auth.usage_flush_ms behind), ordered by key and start.
  Result<std::vector<UsageRowDelta>> UsageRows(UsagePeriod period, int64_t from_ms, int64_t to_ms);
  // Per-minute buckets kept across restarts: key id -> (tokens, updated_ms).
  Status SaveRateBuckets(BucketKind kind, const std::map<std::string, std::pair<double, int64_t>>& buckets);
  Result<std::map<std::string, std::pair<double, int64_t>>> LoadRateBuckets(BucketKind kind);
  // The limits of each role that has any (auth_role_limits); a role without a row has none.
  Result<std::map<std::string, KeyLimits>> LoadRoleLimits();
  // Replaces one role's limits, with its event.
  Status SetRoleLimits(const std::string& role, const KeyLimits& limits, const AuthEvent& event);

  // AlreadyExists for a taken name. With only_if_none, FailedPrecondition when any user exists,
  // decided in the transaction that inserts (two bootstraps at once make one admin).
  Status InsertUser(const UserRecord& user, const AuthEvent& event, bool only_if_none = false);
  Result<std::optional<UserRecord>> FindUser(const std::string& username);
  // Users by name; the search matches the name.
  Result<ListPage<UserRecord>> ListUsers(const ListQuery& query);
  Result<std::vector<UserRecord>> ListUsers();
  // Counts one password attempt before the password is checked, in one transaction: unless
  // the user is unknown, disabled, or locked at now_ms, failed_logins grows by one and
  // locked_until_ms becomes lock_until(the new count) when that is non-zero. So every
  // attempt, however many run at once, sees the count and the lock of those before it.
  Result<LoginAttempt> BeginLoginAttempt(const std::string& username, int64_t now_ms,
                                         const std::function<int64_t(int64_t failures)>& lock_until);
  // A right password: clears the failure count and the lock, sets last_login_ms, with the event.
  Status RecordLoginSuccess(const std::string& username, int64_t now_ms, const AuthEvent& event);
  // Clears the failure count and the lock, with the event. NotFound for an unknown user.
  Status UnlockUser(const std::string& username, const AuthEvent& event);
  // Clears the disabled flag, with the event. NotFound for an unknown user.
  Status EnableUser(const std::string& username, const AuthEvent& event);
  // New hash, sets must_change_password as given, clears the failure count and the lock, ends
  // every session of the user and, when given, starts `successor` (a password change's new
  // session for its caller), all in one transaction. NotFound for an unknown user.
  Status SetPassword(const std::string& username, const std::string& hash, bool must_change_password,
                     const StoredSession* successor, const AuthEvent& event);
  // Disables the user, deletes its sessions and revokes (at now_ms) every key it owns that is
  // not revoked yet, with `event` and key_event(key id) for each key. NotFound for an unknown user.
  Status DisableUser(const std::string& username, int64_t now_ms, const AuthEvent& event,
                     const std::function<AuthEvent(const std::string& key_id)>& key_event);

  // Also removes the rows of sessions past their own deadlines at session.created_ms, so the
  // table holds no more than the sessions of the last timeout.
  Status InsertSession(const Digest& id_hash, const SessionRecord& session);
  Result<std::optional<SessionRecord>> FindSession(const Digest& id_hash);
  // A use at now_ms, which moves the idle deadline to idle_ends_ms.
  Status TouchSession(const Digest& id_hash, int64_t now_ms, int64_t idle_ends_ms);
  Status DeleteSession(const Digest& id_hash, const AuthEvent* event);

  Status AppendEvent(const AuthEvent& event);
  // Up to `limit` events, oldest first.
  Result<std::vector<AuthEvent>> PendingEvents(int limit);
  Status DeleteEventsThrough(int64_t id);

 private:
  store::Store* store_;
  store::SqlStatement find_key_;  // used only inside store_->Read(), under its mutex
};

// Appends `event` to the outbox inside a transaction the caller holds (store::Store::Write), for
// the other stores of the auth tables (budget_store.h) whose changes carry their event.
Status InsertAuthEvent(sqlite3* db, const AuthEvent& event);
// Appends `record` whole to the outbox inside a transaction the caller holds: a change of
// another module (a policy version, a model act) and its audit record commit together or not
// at all, and the AuditOutbox moves the record into the log after the commit.
Status InsertAuditRecord(sqlite3* db, const audit::AuditRecord& record);

}  // namespace kimi::auth
