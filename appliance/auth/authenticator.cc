#include "auth/authenticator.h"

#include <algorithm>

#include "audit/record_builder.h"
#include "auth/api_key.h"
#include "auth/audit_outbox.h"
#include "kimi/log.h"
#include "kimi/utc_time.h"

namespace kimi::auth {
namespace {

// last_seen is written at most this often, and at least ten times per idle timeout: a session in
// use is then never cut more than a tenth of its idle timeout early (a 2 s timeout written every
// 15 s had cut a session polled every half second).
constexpr int64_t kSessionTouchMs = 15'000;
constexpr size_t kSessionIdHexChars = 64;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A generic refusal for the client; the audit event and log carry the reason.
Status BadLogin() { return Status::Unauthenticated("invalid user name or password, or the account is locked"); }

}  // namespace

Status CheckUsername(std::string_view username) {
  if (IsSystemPrincipal(username)) {
    return Status::InvalidArgument("'" + std::string(username) + "' is reserved for a system principal");
  }
  // The name the appliance's own records carry: a user of that name would read as the
  // appliance in the log, the policy history and the console.
  if (username == audit::kDaemonActor) {
    return Status::InvalidArgument("'" + std::string(username) + "' is reserved for the appliance's own records");
  }
  bool ok = !username.empty() && username.size() <= kMaxUsernameBytes && username[0] != '.' && username[0] != '-' &&
            std::all_of(username.begin(), username.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            });
  return ok ? Status::OK()
            : Status::InvalidArgument("user names are 1-64 characters of a-z, 0-9, '.', '_', '-', not starting "
                                      "with '.' or '-'");
}

Authenticator::Authenticator(AuthStore* store, ServerSecret secret, AuthOptions options, AuditOutbox* outbox)
    : store_(store),
      secret_(secret),
      outbox_(outbox),
      options_(std::move(options)),
      login_throttle_(LoginThrottleOptions{options_.login_attempts_per_minute_per_source,
                                           options_.login_attempts_per_minute_per_user}),
      hash_slots_(options_.max_concurrent_password_hashes, options_.password_hash_wait_ms) {
  last_flush_ms_ = NowMs();
  meter_ = std::make_unique<UsageMeter>(store, options_.max_concurrent_streams, [this] { return NowMs(); },
                                        options_.usage_flush_ms);
  Result<std::map<std::string, std::pair<double, int64_t>>> buckets = store->LoadRateBuckets(BucketKind::kRequests);
  if (buckets.ok()) {
    rate_limiter_.Restore(*buckets);
  } else {
    log::Warn("cannot restore the rate-limit buckets; they start full", {{"error", buckets.status().ToString()}});
  }
  Result<std::map<std::string, KeyLimits>> role_limits = store->LoadRoleLimits();
  if (!role_limits.ok()) {
    log::Warn("cannot read the role limits; keys have only their own", {{"error", role_limits.status().ToString()}});
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, limits] : *role_limits) {
    if (std::optional<Role> role = ParseRole(name)) role_limits_[*role] = limits;
  }
}

// Pending last-use times are written by the owner's FlushLastUsed() before the store closes;
// the destructor cannot know whether the store still exists.
Authenticator::~Authenticator() = default;

Status Authenticator::DrainEvents() { return outbox_ ? outbox_->Drain() : Status::OK(); }

Status Authenticator::RecordEvent(const Actor& actor, std::string action, std::string target, std::string outcome,
                                  std::string detail) {
  if (store_ == nullptr) return Status::Unavailable("the auth store is not open yet");
  KIMI_RETURN_IF_ERROR(store_->AppendEvent(
      Event(actor, std::move(action), std::move(target), std::move(outcome), std::move(detail))));
  return DrainEvents();
}

int64_t Authenticator::NowMs() const { return options_.clock_ms ? options_.clock_ms() : UnixMillisNow(); }

AuthEvent ActorEvent(int64_t time_ms, const Actor& actor, std::string action, std::string target, std::string outcome,
                     std::string detail) {
  AuthEvent e;
  e.time_ms = time_ms;
  e.actor = actor.id;
  e.role = actor.role;
  e.source = actor.source;
  e.action = std::move(action);
  e.target = std::move(target);
  e.outcome = std::move(outcome);
  e.detail = std::move(detail);
  return e;
}

AuthEvent Authenticator::Event(const Actor& actor, std::string action, std::string target, std::string outcome,
                               std::string detail) const {
  return ActorEvent(NowMs(), actor, std::move(action), std::move(target), std::move(outcome), std::move(detail));
}

Result<Principal> Authenticator::Authenticate(const Credentials& c) {
  if (store_ == nullptr) return Status::Unavailable("authentication is not ready yet");
  if (!c.bearer.empty() && !c.api_key.empty() && c.bearer != c.api_key) {
    return Status::Unauthenticated("both Authorization and x-api-key were sent and they differ; send one");
  }
  if (!c.bearer.empty()) return AuthenticateKey(c.bearer);
  if (!c.api_key.empty()) return AuthenticateKey(c.api_key);
  if (!c.session_id.empty()) return AuthenticateSession(c);
  return Status::Unauthenticated(
      "authentication required: send an API key as 'Authorization: Bearer sk-kimi-...' or 'x-api-key', or log in");
}

Result<Principal> Authenticator::AuthenticateKey(std::string_view presented) {
  if (!HasApiKeyShape(presented)) return Status::Unauthenticated("invalid API key");
  KIMI_ASSIGN_OR_RETURN(std::optional<KeyMatch> match, store_->FindKeyByHash(secret_->KeyedHash(presented)));
  if (!match) return Status::Unauthenticated("invalid API key");
  const KeyRecord* key = &match->key;
  int64_t now = NowMs();
  if (key->revoked_ms != 0) return Status::Unauthenticated("API key " + key->id + " is revoked");
  if (match->previous_secret && now >= key->previous_expires_ms) {
    return Status::Unauthenticated("API key " + key->id + " was rotated; its previous secret is no longer accepted");
  }
  if (key->expires_ms != 0 && now >= key->expires_ms) return Status::Unauthenticated("API key " + key->id + " expired");
  // Checked here as well as revoked at the disable: a row written before that rule, or by
  // hand, must not outlive its owner.
  if (!IsSystemPrincipal(key->owner) && !key->owner_enabled) {
    return Status::Unauthenticated("API key " + key->id + " belongs to a disabled or removed user");
  }
  std::optional<Role> role = ParseRole(key->role);
  if (!role) return Status::Unauthenticated("API key " + key->id + " has an unknown role");
  NoteKeyUse(key->id, now);
  Principal p;
  p.kind = Principal::Kind::kApiKey;
  p.id = key->id;
  p.role = *role;
  p.owner = key->owner;
  p.models = key->models;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = role_limits_.find(*role);
    p.limits = it == role_limits_.end() ? key->limits : Stricter(key->limits, it->second);
  }
  return p;
}

Result<Principal> Authenticator::AuthenticateSession(const Credentials& c) {
  if (c.session_id.size() != kSessionIdHexChars || !IsHex(c.session_id)) {
    return Status::Unauthenticated("invalid session; log in again");
  }
  Digest hash = secret_->KeyedHash(c.session_id);
  KIMI_ASSIGN_OR_RETURN(std::optional<SessionRecord> session, store_->FindSession(hash));
  if (!session) return Status::Unauthenticated("invalid session; log in again");
  int64_t now = NowMs();
  // The earlier of the deadlines the session was given and those of today's settings: a lowered
  // timeout applies at once, a raised one does not revive a session that had ended.
  if (now >= std::min(session->ends_ms, session->created_ms + options_.session_absolute_timeout_ms) ||
      now >= std::min(session->idle_ends_ms, session->last_seen_ms + options_.session_idle_timeout_ms)) {
    store_->DeleteSession(hash, nullptr);
    return Status::Unauthenticated("session expired; log in again");
  }
  KIMI_ASSIGN_OR_RETURN(std::optional<UserRecord> user, store_->FindUser(session->username));
  std::optional<Role> role = user ? ParseRole(user->role) : std::nullopt;
  if (!user || user->disabled || !role) return Status::Unauthenticated("invalid session; log in again");
  if (c.state_changing) {
    Digest expected = secret_->KeyedHash(session->csrf_token);
    if (c.csrf_token.empty() || !DigestEquals(secret_->KeyedHash(c.csrf_token), expected)) {
      return Status::PermissionDenied("missing or wrong X-CSRF-Token for a request made with the session cookie");
    }
  }
  const int64_t touch_every = std::min(kSessionTouchMs, options_.session_idle_timeout_ms / 10);
  if (now - session->last_seen_ms >= touch_every) {
    store_->TouchSession(hash, now, now + options_.session_idle_timeout_ms);
  }
  Principal p;
  p.kind = Principal::Kind::kSession;
  p.id = user->username;
  p.role = *role;
  p.owner = user->username;
  p.must_change_password = user->must_change_password;
  p.session_hash = hash;
  return p;
}

Status Authenticator::Authorize(const Principal& principal, Permission permission) {
  if (principal.must_change_password && permission != Permission::kSessionSelf) {
    return Status::PermissionDenied("the password must be changed first (POST /admin/v1/session/password)");
  }
  if (!RoleAllows(principal.role, permission)) {
    return Status::PermissionDenied("role " + std::string(RoleName(principal.role)) + " lacks the permission " +
                                    std::string(PermissionName(permission)));
  }
  return Status::OK();
}

Status Authenticator::Admit(const Principal& principal, int64_t* retry_after_s) {
  if (principal.kind != Principal::Kind::kApiKey) return Status::OK();
  return rate_limiter_.Admit(principal.id, principal.limits.requests_per_minute, NowMs(), retry_after_s);
}

Result<std::unique_ptr<UsageMeter::Lease>> Authenticator::BeginGeneration(const Principal& principal,
                                                                          int64_t* retry_after_s,
                                                                          int64_t most_tokens) {
  if (meter_ == nullptr) return Status::Unavailable("authentication is not ready yet");
  return meter_->Begin(principal, retry_after_s, most_tokens);
}

Result<KeyUsage> Authenticator::Usage(const std::string& key_id) {
  if (meter_ == nullptr) return Status::Unavailable("authentication is not ready yet");
  return meter_->Usage(key_id);
}

std::map<Role, KeyLimits> Authenticator::RoleLimits() {
  std::map<Role, KeyLimits> out;
  for (Role role : AllRoles()) out[role] = KeyLimits{};
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [role, limits] : role_limits_) out[role] = limits;
  return out;
}

Status Authenticator::SetRoleLimits(const Actor& actor, Role role, const KeyLimits& limits) {
  std::lock_guard<std::mutex> edit(role_limits_edit_mu_);
  return WriteRoleLimits(actor, role, limits);
}

Result<KeyLimits> Authenticator::UpdateRoleLimits(const Actor& actor, Role role, const KeyChange& change) {
  // Read, change and write under one lock: two edits of different fields at once keep both.
  std::lock_guard<std::mutex> edit(role_limits_edit_mu_);
  KeyLimits limits = ApplyLimitChange(RoleLimits()[role], change);
  KIMI_RETURN_IF_ERROR(WriteRoleLimits(actor, role, limits));
  return limits;
}

Status Authenticator::WriteRoleLimits(const Actor& actor, Role role, const KeyLimits& limits) {
  KIMI_RETURN_IF_ERROR(CheckKeyLimits(limits));
  std::string detail = DescribeKeyLimits(limits);
  KIMI_RETURN_IF_ERROR(store_->SetRoleLimits(std::string(RoleName(role)), limits,
                                             Event(actor, "auth.role_limits_changed", std::string(RoleName(role)),
                                                   "ok", detail.empty() ? "no limits" : detail)));
  std::lock_guard<std::mutex> lock(mu_);
  role_limits_[role] = limits;
  return Status::OK();
}

Status Authenticator::CheckModelAllowed(const Principal& principal, std::string_view model) {
  if (principal.models.empty()) return Status::OK();
  for (const std::string& m : principal.models) {
    if (m == model) return Status::OK();
  }
  return Status::PermissionDenied("this API key may not use the model " + std::string(model));
}

Result<std::string> Authenticator::Hash(const std::string& password) {
  KIMI_ASSIGN_OR_RETURN(HashSlots::Slot slot, hash_slots_.Acquire());
  return HashPassword(password, options_.password);
}

void Authenticator::NoteKeyUse(const std::string& key_id, int64_t now_ms) {
  bool flush = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_used_[key_id] = now_ms;
    flush = now_ms - last_flush_ms_ >= options_.last_used_flush_ms;
  }
  if (flush) FlushLastUsed();
}

Status Authenticator::FlushLastUsed() {
  std::map<std::string, int64_t> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(last_used_);
    last_flush_ms_ = NowMs();
  }
  Status s = store_->TouchKeys(batch);
  if (!s.ok()) log::Warn("cannot record API key use times", {{"error", s.ToString()}});
  Status saved = store_->SaveRateBuckets(BucketKind::kRequests, rate_limiter_.Snapshot());
  if (saved.ok() && meter_ != nullptr) saved = meter_->SaveBuckets();
  if (!saved.ok()) log::Warn("cannot save the rate-limit buckets", {{"error", saved.ToString()}});
  return s.ok() ? saved : s;
}

Status Authenticator::Close() {
  Status flushed = FlushLastUsed();
  Status closed = meter_ == nullptr ? Status::OK() : meter_->Close();
  if (!closed.ok()) log::Error("cannot write the keys' token usage", {{"error", closed.ToString()}});
  return flushed.ok() ? closed : flushed;
}

UsageLedgerStats Authenticator::UsageStats() const {
  return meter_ == nullptr ? UsageLedgerStats{} : meter_->UsageStats();
}

Result<Session> Authenticator::Login(const std::string& username, const std::string& password,
                                     const std::string& source, int64_t* retry_after_s) {
  int64_t no_retry_after = 0;
  if (retry_after_s == nullptr) retry_after_s = &no_retry_after;
  // Bounded before anything is hashed or written: both end up in the audit log.
  KIMI_RETURN_IF_ERROR(CheckUsername(username));
  KIMI_RETURN_IF_ERROR(CheckPasswordLength("password", password));
  Actor actor{username, "", source};
  bool first_refusal = false;
  Status admitted = login_throttle_.Admit(source, username, NowMs(), retry_after_s, &first_refusal);
  if (!admitted.ok()) {
    if (first_refusal) {
      KIMI_RETURN_IF_ERROR(
          store_->AppendEvent(Event(actor, "auth.login_throttled", username, "denied", admitted.message())));
    }
    return admitted;
  }
  Result<UserRecord> user = CheckPasswordAttempt(username, password, actor, "wrong password");
  if (!user.ok()) {
    if (user.status().code() == Status::Code::kResourceExhausted) *retry_after_s = 1;
    return user.status();
  }
  std::optional<Role> role = ParseRole(user->role);
  if (!role) return Status::Internal("user " + username + " has an unknown role");
  int64_t now = NowMs();
  actor.role = user->role;
  KIMI_RETURN_IF_ERROR(store_->RecordLoginSuccess(
      username, now,
      Event(actor, "auth.login", username, "ok", user->must_change_password ? "password change required" : "")));

  NewSession made = MakeSession(username, *role, user->must_change_password, now);
  KIMI_RETURN_IF_ERROR(store_->InsertSession(made.row.id_hash, made.row.record));
  return made.session;
}

Authenticator::NewSession Authenticator::MakeSession(const std::string& username, Role role,
                                                     bool must_change_password, int64_t now_ms) const {
  NewSession made;
  Session& session = made.session;
  session.session_id = RandomHex(32);
  session.csrf_token = RandomHex(32);
  session.expires_ms = now_ms + options_.session_absolute_timeout_ms;
  session.principal.kind = Principal::Kind::kSession;
  session.principal.id = username;
  session.principal.role = role;
  session.principal.owner = username;
  session.principal.must_change_password = must_change_password;
  session.principal.session_hash = secret_->KeyedHash(session.session_id);
  made.row = StoredSession{session.principal.session_hash,
                           SessionRecord{username, session.csrf_token, now_ms, now_ms, session.expires_ms,
                                         now_ms + options_.session_idle_timeout_ms}};
  return made;
}

int64_t Authenticator::LockUntil(int64_t failures, int64_t now_ms) const {
  if (failures < options_.lockout_threshold) return 0;
  int64_t doublings = std::min<int64_t>(failures - options_.lockout_threshold, 30);
  return now_ms + std::min(options_.lockout_max_ms, options_.lockout_base_ms << doublings);
}

Result<UserRecord> Authenticator::CheckPasswordAttempt(const std::string& username, const std::string& password,
                                                       const Actor& actor, const std::string& why_wrong) {
  KIMI_ASSIGN_OR_RETURN(HashSlots::Slot slot, hash_slots_.Acquire());
  int64_t now = NowMs();
  KIMI_ASSIGN_OR_RETURN(LoginAttempt attempt, store_->BeginLoginAttempt(username, now, [&](int64_t failures) {
                          return LockUntil(failures, now);
                        }));
  Actor who = actor;
  who.role = attempt.user.role;
  std::string refused;
  switch (attempt.refusal) {
    case LoginAttempt::Refusal::kUnknownUser: refused = "unknown user"; break;
    case LoginAttempt::Refusal::kDisabled: refused = "user disabled"; break;
    case LoginAttempt::Refusal::kLocked:
      refused = "account locked until " + FormatUtcMillis(attempt.user.locked_until_ms);
      break;
    case LoginAttempt::Refusal::kNone: break;
  }
  if (!refused.empty()) {
    VerifyDummyPassword(password, options_.password);  // the work of a wrong password, so the answer is the same
    KIMI_RETURN_IF_ERROR(store_->AppendEvent(Event(who, "auth.login_failed", username, "denied", refused)));
    return BadLogin();
  }
  const UserRecord& user = attempt.user;
  if (VerifyPassword(user.password_hash, password)) return attempt.user;
  std::string detail = why_wrong + "; consecutive failures " + std::to_string(user.failed_logins);
  std::string action = "auth.login_failed";
  if (user.locked_until_ms > now) {
    action = "auth.account_locked";
    detail += "; locked until " + FormatUtcMillis(user.locked_until_ms);
    log::Warn("console account locked after repeated login failures",
              {{"user", username}, {"failures", user.failed_logins}, {"source", actor.source}});
  }
  KIMI_RETURN_IF_ERROR(store_->AppendEvent(Event(who, action, username, "denied", detail)));
  return BadLogin();
}

Status Authenticator::Logout(const Principal& principal, const std::string& source) {
  if (principal.kind != Principal::Kind::kSession) {
    return Status::InvalidArgument("logout needs the session cookie, not an API key");
  }
  AuthEvent event = Event(Actor::Of(principal, source), "auth.logout", principal.id, "ok", "");
  return store_->DeleteSession(principal.session_hash, &event);
}

Result<Session> Authenticator::ChangePassword(const Principal& principal, const std::string& old_password,
                                              const std::string& new_password, const std::string& source) {
  if (principal.kind != Principal::Kind::kSession) {
    return Status::InvalidArgument("changing a password needs the session cookie, not an API key");
  }
  KIMI_RETURN_IF_ERROR(CheckPasswordLength("old_password", old_password));
  // The rules first: an attempt counts against the account only when its password is checked.
  if (old_password == new_password) return Status::InvalidArgument("the new password must differ from the old one");
  KIMI_RETURN_IF_ERROR(CheckPasswordRules(principal.id, new_password, options_.password));
  Result<UserRecord> checked = CheckPasswordAttempt(principal.id, old_password, Actor::Of(principal, source),
                                                    "wrong current password at password change");
  if (!checked.ok()) {
    if (checked.status().code() != Status::Code::kUnauthenticated) return checked.status();
    return Status::PermissionDenied("the current password is wrong, or the account is locked");
  }
  KIMI_ASSIGN_OR_RETURN(std::string hash, Hash(new_password));
  NewSession successor = MakeSession(principal.id, principal.role, /*must_change_password=*/false, NowMs());
  KIMI_RETURN_IF_ERROR(store_->SetPassword(principal.id, hash, /*must_change_password=*/false, &successor.row,
                                           Event(Actor::Of(principal, source), "auth.password_changed",
                                                 principal.id, "ok", "sessions ended; a new one issued")));
  return successor.session;
}

Result<CreatedKey> Authenticator::CreateKey(const Actor& actor, const NewKey& spec) {
  if (spec.name.empty() || spec.name.size() > 128) return Status::InvalidArgument("a key needs a name of 1-128 characters");
  if (spec.expires_ms != 0 && spec.expires_ms <= NowMs()) {
    return Status::InvalidArgument("the expiry must be in the future");
  }
  CreatedKey created;
  created.secret = GenerateApiKey();
  KeyRecord& k = created.record;
  k.id = GenerateKeyId();
  k.name = spec.name;
  k.owner = !spec.owner.empty() ? spec.owner : !actor.owner.empty() ? actor.owner : std::string(kSystemPrincipal);
  KIMI_RETURN_IF_ERROR(CheckKeyOwner(k.owner));
  k.owner_enabled = true;  // what CheckKeyOwner found; the answer shows the key's state from it
  k.role = std::string(RoleName(spec.role));
  k.models = spec.models;
  k.created_ms = NowMs();
  k.expires_ms = spec.expires_ms;
  KIMI_RETURN_IF_ERROR(CheckKeyLimits(spec.limits));
  k.limits = spec.limits;
  std::string detail = "name " + k.name + "; owner " + k.owner + "; role " + k.role;
  if (k.expires_ms != 0) detail += "; expires " + FormatUtcMillis(k.expires_ms);
  if (std::string limits = DescribeKeyLimits(k.limits); !limits.empty()) detail += "; " + limits;
  KIMI_RETURN_IF_ERROR(store_->InsertKey(k, secret_->KeyedHash(created.secret),
                                         Event(actor, "auth.key_created", k.id, "ok", detail)));
  return created;
}

Status Authenticator::CheckKeyOwner(const std::string& owner) {
  if (IsSystemPrincipal(owner)) return Status::OK();
  std::string principals;
  for (std::string_view p : kSystemPrincipals) principals += (principals.empty() ? "" : ", ") + std::string(p);
  // The value is not repeated: it may be anything a client sent.
  Status refused = Status::InvalidArgument("the owner must be an enabled console user or a system principal (" +
                                           principals + ")");
  if (!CheckUsername(owner).ok()) return refused;
  KIMI_ASSIGN_OR_RETURN(std::optional<UserRecord> user, store_->FindUser(owner));
  return user && !user->disabled ? Status::OK() : refused;
}

Result<std::vector<KeyRecord>> Authenticator::ListKeys() {
  FlushLastUsed();
  return store_->ListKeys();
}

Result<ListPage<KeyRecord>> Authenticator::ListKeys(const ListQuery& query) {
  FlushLastUsed();
  return store_->ListKeys(query);
}

Result<CreatedKey> Authenticator::RotateKey(const Actor& actor, const std::string& key_id, int64_t grace_ms) {
  if (grace_ms < 0 || grace_ms > kMaxRotationGraceMs) {
    return Status::InvalidArgument("the grace period must be 0 to " + std::to_string(kMaxRotationGraceMs / 1000) +
                                   " seconds (7 days)");
  }
  CreatedKey rotated;
  rotated.secret = GenerateApiKey();
  int64_t now = NowMs();
  int64_t until = now + grace_ms;
  std::string detail = grace_ms == 0 ? "previous secret refused at once"
                                     : "previous secret accepted until " + FormatUtcMillis(until) + " (grace " +
                                           std::to_string(grace_ms / 1000) + " s)";
  KIMI_RETURN_IF_ERROR(store_->RotateKey(key_id, secret_->KeyedHash(rotated.secret), now, until,
                                         Event(actor, "auth.key_rotated", key_id, "ok", detail), &rotated.record));
  return rotated;
}

Status Authenticator::RevokeKey(const Actor& actor, const std::string& key_id) {
  return store_->RevokeKey(key_id, NowMs(), Event(actor, "auth.key_revoked", key_id, "ok", ""));
}

Result<KeyRecord> Authenticator::UpdateKey(const Actor& actor, const std::string& key_id, const KeyChange& change) {
  if (change.empty()) return Status::InvalidArgument("nothing to change: give a role, models or a limit");
  KeyRecord written;
  KIMI_RETURN_IF_ERROR(store_->EditKey(
      key_id,
      [&](KeyRecord* key) -> Result<AuthEvent> {
        if (key->revoked_ms != 0) {
          return Status::FailedPrecondition("API key " + key_id + " is revoked; a revoked key cannot be edited");
        }
        KeyRecord after = ApplyKeyChange(*key, change);
        KIMI_RETURN_IF_ERROR(CheckKeyLimits(after.limits));
        std::string difference = DescribeKeyChange(*key, after);
        *key = std::move(after);
        return Event(actor, "auth.key_updated", key_id, "ok", difference.empty() ? "no change" : difference);
      },
      &written));
  return written;
}

Result<std::string> Authenticator::AddUser(const Actor& actor, const std::string& username, Role role) {
  return NewUser(actor, username, role, /*only_if_none=*/false);
}

Result<std::string> Authenticator::NewUser(const Actor& actor, const std::string& username, Role role,
                                           bool only_if_none) {
  KIMI_RETURN_IF_ERROR(CheckUsername(username));
  if (!IsUserRole(role)) return Status::InvalidArgument("role scrape is for API keys only");
  std::string one_time = GenerateOneTimePassword();
  KIMI_ASSIGN_OR_RETURN(std::string hash, Hash(one_time));
  UserRecord u;
  u.username = username;
  u.password_hash = hash;
  u.role = std::string(RoleName(role));
  u.must_change_password = true;
  u.created_ms = NowMs();
  KIMI_RETURN_IF_ERROR(
      store_->InsertUser(u, Event(actor, "auth.user_added", username, "ok", "role " + u.role), only_if_none));
  return one_time;
}

Result<std::vector<UserRecord>> Authenticator::ListUsers() { return store_->ListUsers(); }

Result<ListPage<UserRecord>> Authenticator::ListUsers(const ListQuery& query) { return store_->ListUsers(query); }

// Whether `actor` is `username` or acts for it: a user's session, or a key the user owns.
static bool ActsFor(const Actor& actor, const std::string& username) { return actor.id == username || actor.owner == username; }

Result<std::string> Authenticator::ResetPassword(const Actor& actor, const std::string& username) {
  if (ActsFor(actor, username)) {
    return Status::InvalidArgument("a user cannot reset its own password; change it instead");
  }
  KIMI_RETURN_IF_ERROR(CheckUsername(username));
  std::string one_time = GenerateOneTimePassword();
  KIMI_ASSIGN_OR_RETURN(std::string hash, Hash(one_time));
  KIMI_RETURN_IF_ERROR(store_->SetPassword(username, hash, /*must_change_password=*/true, nullptr,
                                           Event(actor, "auth.password_reset", username, "ok",
                                                 "one-time password issued; sessions ended")));
  return one_time;
}

Status Authenticator::DisableUser(const Actor& actor, const std::string& username) {
  if (ActsFor(actor, username)) return Status::InvalidArgument("a user cannot disable itself, with a session or a key");
  return store_->DisableUser(username, NowMs(), Event(actor, "auth.user_disabled", username, "ok", ""),
                             [&](const std::string& key_id) {
                               return Event(actor, "auth.key_revoked", key_id, "ok", "owner " + username + " disabled");
                             });
}

Status Authenticator::EnableUser(const Actor& actor, const std::string& username) {
  return store_->EnableUser(username, Event(actor, "auth.user_enabled", username, "ok", ""));
}

Status Authenticator::UnlockUser(const Actor& actor, const std::string& username) {
  return store_->UnlockUser(username, Event(actor, "auth.user_unlocked", username, "ok", ""));
}

Result<std::string> Authenticator::Bootstrap(const Actor& actor, const std::string& username) {
  // No user may exist when the row is inserted, checked in that transaction: a count read
  // before the hashing would let two bootstraps at once both pass it.
  return NewUser(actor, username, Role::kAdmin, /*only_if_none=*/true);
}

}  // namespace kimi::auth
