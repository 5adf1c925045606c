// Authenticator: the auth module's policy. Turns credentials into a Principal (API key or
// console session), decides whether a principal holds a permission, and performs every
// change to keys, users and sessions, each with its auth event in the same transaction
// (AuthStore's outbox, which AuditOutbox moves into the audit log).
//
// API keys: looked up by their keyed BLAKE2b hash (server_secret.h); refused when unknown,
// revoked or expired, at the next request after the change (no cache). A rotation gives a key
// a new secret under the same id; the old secret keeps working until the grace period the
// operator chose ends (at most kMaxRotationGraceMs), and is refused from then on. last_used_ms is
// collected in memory and written at most every last_used_flush_ms, and by FlushLastUsed().
// A key's principal carries the stricter of its own limits and its role's (key_limits.h);
// role limits are kept in memory, loaded at construction and changed only by SetRoleLimits() and
// UpdateRoleLimits(), one at a time.
//
// Passwords: Argon2id, at most max_concurrent_password_hashes at once (login_throttle.h).
// A login is throttled per client address and per user name before anything is hashed or
// written. Each attempt is counted against the account before its password is checked
// (AuthStore::BeginLoginAttempt), and the lockout_threshold-th consecutive one locks the
// account for lockout_base_ms, doubling with each further failure up to lockout_max_ms; a
// right password clears the count and the lock. So attempts running at once cannot all pass
// on one stale count. Unknown, disabled, locked and wrong-password logins do the same work
// (one Argon2id verification) and get the same answer.
//
// Key owners: an existing user or a system principal (principal.h). Disabling a user revokes
// its keys; a key whose owner is a disabled or missing user is refused at authentication all
// the same, whatever its row says.
//
// Sessions: 256-bit random ids kept only as keyed hashes; an idle and an absolute timeout;
// a CSRF token per session that must accompany every state-changing request made with the
// session cookie.
// Public header of auth/: other folders include it.
// Thread safety: every public method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/auth_store.h"
#include "auth/key_change.h"
#include "auth/lifecycle_state.h"
#include "auth/list_query.h"
#include "auth/login_throttle.h"
#include "auth/password.h"
#include "auth/principal.h"
#include "auth/rate_limiter.h"
#include "auth/roles.h"
#include "auth/usage_meter.h"
#include "auth/server_secret.h"
#include "kimi/status.h"

namespace kimi::auth {

struct AuthOptions {
  PasswordParams password;
  int64_t lockout_threshold = 5;
  int64_t lockout_base_ms = 30'000;
  int64_t lockout_max_ms = 3'600'000;
  int64_t session_idle_timeout_ms = 1'800'000;
  int64_t session_absolute_timeout_ms = 43'200'000;
  int64_t last_used_flush_ms = 10'000;
  int64_t max_concurrent_streams = 0;  // appliance-wide generation requests in flight; 0: none
  int64_t usage_flush_ms = UsageMeter::kDefaultUsageFlushMs;  // usage rows written at most this late
  int64_t login_attempts_per_minute_per_source = 30;  // per client address; 0: no limit
  int64_t login_attempts_per_minute_per_user = 10;    // per user name, known or not; 0: no limit
  int64_t max_concurrent_password_hashes = 4;         // Argon2id computations at once
  int64_t password_hash_wait_ms = 2'000;              // longest wait for one before a 429
  std::function<int64_t()> clock_ms;  // Unix ms; the system clock when empty
};

// Who performs an administrative act (for its auth event).
struct Actor {
  std::string id;      // user name, key id, or "kimictl" for local commands
  std::string role;    // roles.h name, or "system"
  std::string source;  // client address, or "local"
  std::string owner;   // whom the actor acts for: a user or a system principal; empty: "system"
  static Actor Of(const Principal& p, std::string source) {
    return Actor{p.id, std::string(RoleName(p.role)), std::move(source), p.owner};
  }
};

// The auth event of an act by `actor` at time_ms (every module that writes auth events).
AuthEvent ActorEvent(int64_t time_ms, const Actor& actor, std::string action, std::string target, std::string outcome,
                     std::string detail);

struct NewKey {
  std::string name;
  std::string owner;
  Role role = Role::kUser;
  std::vector<std::string> models;
  int64_t expires_ms = 0;  // 0: never
  KeyLimits limits;
};

struct CreatedKey {
  std::string secret;  // "sk-kimi-...": shown once, never stored
  KeyRecord record;
};

struct Session {
  std::string session_id;  // the cookie value: shown once, stored only as a hash
  std::string csrf_token;
  Principal principal;
  int64_t expires_ms = 0;  // absolute expiry
};

class AuditOutbox;

class Authenticator {
 public:
  // `store` and `outbox` outlive the authenticator; `outbox` may be null (kimictl), then
  // auth events stay in the store's outbox for the daemon to move.
  Authenticator(AuthStore* store, ServerSecret secret, AuthOptions options, AuditOutbox* outbox = nullptr);
  ~Authenticator();
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  // Moves pending auth events into the audit log (a no-op without an outbox).
  Status DrainEvents();
  // Records an act done outside this module (a TLS certificate reload) as an auth event, and
  // drains it into the audit log.
  Status RecordEvent(const Actor& actor, std::string action, std::string target, std::string outcome,
                     std::string detail);

  // Unauthenticated when the credentials are absent, malformed, unknown, revoked, expired or
  // belong to a disabled user; PermissionDenied when a cookie-authenticated state-changing
  // request lacks the session's CSRF token. Messages never repeat the secret.
  Result<Principal> Authenticate(const Credentials& credentials);
  // PermissionDenied unless the role holds the permission; a user who must change the
  // password holds only kSessionSelf until then.
  static Status Authorize(const Principal& principal, Permission permission);
  // PermissionDenied when the principal's key is limited to models that do not include `model`.
  static Status CheckModelAllowed(const Principal& principal, std::string_view model);

  // Spends one request of the principal's rate limit (API keys with a limit only);
  // ResourceExhausted with *retry_after_s when none is left.
  Status Admit(const Principal& principal, int64_t* retry_after_s);

  // The quotas of a generation request (usage_meter.h): a lease to hold until the response
  // ends, or ResourceExhausted naming the limit with *retry_after_s set.
  Result<std::unique_ptr<UsageMeter::Lease>> BeginGeneration(const Principal& principal, int64_t* retry_after_s,
                                                              int64_t most_tokens = 0);
  // The key's usage in the current UTC day and month.
  Result<KeyUsage> Usage(const std::string& key_id);
  // Generation requests of the key in flight now.
  int64_t StreamsInFlight(const std::string& key_id) { return meter_ ? meter_->InFlight(key_id) : 0; }
  // The limits of every role (all zero for a role without any).
  std::map<Role, KeyLimits> RoleLimits();
  // Replaces a role's limits, effective from the next request of each of its keys.
  Status SetRoleLimits(const Actor& actor, Role role, const KeyLimits& limits);
  // Writes the change's limits over the role's (those it leaves out keep their value), as
  // one step with respect to every other change of role limits. Returns the limits written.
  Result<KeyLimits> UpdateRoleLimits(const Actor& actor, Role role, const KeyChange& change);

  // Console login. InvalidArgument for a malformed user name or a password over
  // kMaxPasswordBytes; ResourceExhausted with *retry_after_s when the source or the user name
  // spent its attempts (audited once per refusal window) or no hash slot came free;
  // Unauthenticated with one message for every other failure (unknown user, wrong password,
  // disabled, locked), each after one Argon2id verification; the auth event says which.
  Result<Session> Login(const std::string& username, const std::string& password, const std::string& source,
                        int64_t* retry_after_s = nullptr);
  Status Logout(const Principal& principal, const std::string& source);
  // Ends every session of the user, the caller's too, and answers the caller's new one: a
  // copy of the id the change was made with (a thief's) must not outlive the change.
  Result<Session> ChangePassword(const Principal& principal, const std::string& old_password,
                                 const std::string& new_password, const std::string& source);

  // InvalidArgument for an empty name, an unusable role, or an owner that is neither an
  // enabled user nor a system principal. An empty owner is the actor's owner.
  Result<CreatedKey> CreateKey(const Actor& actor, const NewKey& spec);
  // OK when `owner` may own a key: a system principal or an existing, enabled user.
  Status CheckKeyOwner(const std::string& owner);
  Result<std::vector<KeyRecord>> ListKeys();
  Result<ListPage<KeyRecord>> ListKeys(const ListQuery& query);
  Status RevokeKey(const Actor& actor, const std::string& key_id);
  // Edits a key's role, allowed models and own limits (key_change.h), effective from its next
  // request, with one auth event "auth.key_updated" whose detail is the difference. NotFound
  // for an unknown id, FailedPrecondition for a revoked key, InvalidArgument for an empty
  // change or a negative limit. Which model names exist is the caller's to check. Returns
  // the key as written.
  Result<KeyRecord> UpdateKey(const Actor& actor, const std::string& key_id, const KeyChange& change);
  // A new secret for the key (returned once, with the key as written); the old one is accepted
  // for grace_ms more (0: refused at once), with one auth event "auth.key_rotated".
  // InvalidArgument for a grace outside 0..kMaxRotationGraceMs; NotFound for an unknown id;
  // FailedPrecondition for a revoked or expired key.
  Result<CreatedKey> RotateKey(const Actor& actor, const std::string& key_id, int64_t grace_ms);

  // Adds a user with a one-time password (returned; must be changed at first login).
  Result<std::string> AddUser(const Actor& actor, const std::string& username, Role role);
  Result<std::vector<UserRecord>> ListUsers();
  Result<ListPage<UserRecord>> ListUsers(const ListQuery& query);
  // Disables the user, ends its sessions and revokes its keys (an auth event each).
  Status DisableUser(const Actor& actor, const std::string& username);
  // Lets a disabled user log in again; its revoked keys stay revoked.
  Status EnableUser(const Actor& actor, const std::string& username);
  // Clears the user's failure count and lock.
  Status UnlockUser(const Actor& actor, const std::string& username);
  // Replaces the user's password with a one-time password (returned; shown once), which must be
  // changed at the next sign-in, clears its lock and ends every session it has, with the auth
  // event "auth.password_reset". A disabled user stays disabled. InvalidArgument for the
  // actor's own account (that is a password change); NotFound for an unknown user.
  Result<std::string> ResetPassword(const Actor& actor, const std::string& username);
  // The first admin: FailedPrecondition when any user exists. Returns the one-time password.
  Result<std::string> Bootstrap(const Actor& actor, const std::string& username);

  // Writes the batched last-used times and the rate buckets now. Call before closing the store.
  Status FlushLastUsed();
  // At shutdown, before the store closes: FlushLastUsed(), then writes the keys' usage not
  // written yet and stops its writer (usage_ledger.h). Idempotent.
  Status Close();
  // The usage writer's counters (transactions, rows), for metrics and benchmarks.
  UsageLedgerStats UsageStats() const;

  const AuthOptions& options() const { return options_; }

 private:
  int64_t NowMs() const;
  AuthEvent Event(const Actor& actor, std::string action, std::string target, std::string outcome,
                  std::string detail) const;
  Result<Principal> AuthenticateKey(std::string_view presented);
  Result<Principal> AuthenticateSession(const Credentials& credentials);
  void NoteKeyUse(const std::string& key_id, int64_t now_ms);
  // SetRoleLimits' write. Requires role_limits_edit_mu_ held.
  Status WriteRoleLimits(const Actor& actor, Role role, const KeyLimits& limits);
  // AddUser; with only_if_none, only while there is no user at all (Bootstrap).
  Result<std::string> NewUser(const Actor& actor, const std::string& username, Role role, bool only_if_none);
  // A new session of `username` at now_ms: what the caller is shown once, and its row.
  struct NewSession {
    Session session;
    StoredSession row;
  };
  NewSession MakeSession(const std::string& username, Role role, bool must_change_password,
                         int64_t now_ms) const;
  // HashPassword within a hash slot.
  Result<std::string> Hash(const std::string& password);
  // The lock that `failures` consecutive failures earn from now_ms (0: none).
  int64_t LockUntil(int64_t failures, int64_t now_ms) const;
  // Counts one attempt and checks the password, with the same work (one verification) for
  // every outcome. Unauthenticated (the generic refusal) unless the password is right; the
  // event of a refusal is written, the success's is the caller's.
  Result<UserRecord> CheckPasswordAttempt(const std::string& username, const std::string& password,
                                          const Actor& actor, const std::string& why_wrong);

  AuthStore* store_ = nullptr;
  std::optional<ServerSecret> secret_;
  AuditOutbox* outbox_ = nullptr;
  const AuthOptions options_;

  LoginThrottle login_throttle_;
  HashSlots hash_slots_;
  RateLimiter rate_limiter_;
  std::unique_ptr<UsageMeter> meter_;
  std::mutex mu_;
  std::map<std::string, int64_t> last_used_;  // guarded by mu_: key id -> newest use not yet written
  int64_t last_flush_ms_ = 0;                 // guarded by mu_
  std::map<Role, KeyLimits> role_limits_;     // guarded by mu_: roles with limits
  std::mutex role_limits_edit_mu_;            // held across a role-limits read-change-write
};

inline constexpr size_t kMaxUsernameBytes = 64;

// User names: 1-64 of [a-z0-9._-], not starting with '.' or '-', and not a system principal.
Status CheckUsername(std::string_view username);

}  // namespace kimi::auth
