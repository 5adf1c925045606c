#include "auth/auth_store.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "audit/audit_text.h"
#include "auth/limit_columns.h"
#include "kimi/utc_time.h"

namespace kimi::auth {
namespace {

using store::SqlStatement;

// A hash column; all zeros when the stored blob is not a digest (no stored hash equals it).
Digest DigestColumn(const SqlStatement& s, int col) {
  Digest out{};
  const std::string bytes = s.Blob(col);
  if (bytes.size() == out.size()) std::memcpy(out.data(), bytes.data(), out.size());
  return out;
}

// Then the limits (limit_columns.h) from column 10 on, then whether the owner is an enabled
// user (1; 0 when disabled, NULL when no such user) at kOwnerEnabledColumn, then the previous
// secret's expiry and hash.
const std::string kKeyColumns =
    std::string("id, name, owner, role, models, created_ms, expires_ms, revoked_ms, last_used_ms, key_hash, ") +
    kLimitColumns +
    ", (SELECT disabled = 0 FROM auth_users WHERE auth_users.username = auth_keys.owner), previous_expires_ms, "
    "previous_key_hash";
constexpr int kKeyHashColumn = 9;
constexpr int kOwnerEnabledColumn = 15;
constexpr int kPreviousExpiresColumn = 16;
constexpr int kPreviousHashColumn = 17;
// The searches of the lists: ?1 is a store::LikeContains pattern, "%%" for an empty search.
constexpr const char* kKeySearch =
    " WHERE ?1 = '%%' OR name LIKE ?1 ESCAPE '\\' OR owner LIKE ?1 ESCAPE '\\' OR id LIKE ?1 ESCAPE '\\'";
constexpr const char* kUserSearch = " WHERE ?1 = '%%' OR username LIKE ?1 ESCAPE '\\'";
constexpr const char* kUserColumns =
    "username, password_hash, role, disabled, must_change_password, failed_logins, locked_until_ms, created_ms, "
    "last_login_ms";

std::string ModelsToText(const std::vector<std::string>& models) { return nlohmann::json(models).dump(); }

std::vector<std::string> ModelsFromText(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& m : j) {
    if (m.is_string()) out.push_back(m.get<std::string>());
  }
  return out;
}

KeyRecord ReadKey(const SqlStatement& s) {
  KeyRecord k;
  k.id = s.Text(0);
  k.name = s.Text(1);
  k.owner = s.Text(2);
  k.role = s.Text(3);
  k.models = ModelsFromText(s.Text(4));
  k.created_ms = s.Int(5);
  k.expires_ms = s.Int(6);
  k.revoked_ms = s.Int(7);
  k.last_used_ms = s.Int(8);
  k.limits = ReadLimitColumns(s, 10);
  k.owner_enabled = s.Int(kOwnerEnabledColumn) == 1;
  k.previous_expires_ms = s.Int(kPreviousExpiresColumn);
  return k;
}

// The key with `id`, read inside a write transaction on `db`; NotFound when there is none.
Result<KeyRecord> ReadKeyById(sqlite3* db, const std::string& id) {
  static const std::string select = "SELECT " + kKeyColumns + " FROM auth_keys WHERE id = ?1";
  SqlStatement read(db, select.c_str());
  read.Bind(1, id);
  KIMI_ASSIGN_OR_RETURN(bool row, read.Step());
  if (!row) return Status::NotFound("no API key with id " + id);
  return ReadKey(read);
}

UserRecord ReadUser(const SqlStatement& s) {
  UserRecord u;
  u.username = s.Text(0);
  u.password_hash = s.Text(1);
  u.role = s.Text(2);
  u.disabled = s.Int(3) != 0;
  u.must_change_password = s.Int(4) != 0;
  u.failed_logins = s.Int(5);
  u.locked_until_ms = s.Int(6);
  u.created_ms = s.Int(7);
  u.last_login_ms = s.Int(8);
  return u;
}

// The outbox is the audit log's way in, so its rows are bounded as audit records are
// (audit/audit_text.h): an anonymous login with a huge user name cannot grow this table either.
Status InsertEvent(sqlite3* db, const AuthEvent& e) {
  SqlStatement s(db,
                 "INSERT INTO auth_events(time_ms, actor, role, source, action, target, outcome, detail, record) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  using audit::AuditText;
  s.Bind(1, e.time_ms).Bind(2, AuditText(e.actor)).Bind(3, AuditText(e.role)).Bind(4, AuditText(e.source));
  s.Bind(5, AuditText(e.action)).Bind(6, AuditText(e.target)).Bind(7, AuditText(e.outcome));
  s.Bind(8, AuditText(e.detail, audit::kMaxAuditDetailBytes)).Bind(9, e.record);
  return s.Run();
}

Status InsertSessionRow(sqlite3* db, const StoredSession& session) {
  const SessionRecord& r = session.record;
  SqlStatement s(db,
                 "INSERT INTO auth_sessions(id_hash, username, csrf_token, created_ms, last_seen_ms, ends_ms, "
                 "idle_ends_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  s.BindBlob(1, session.id_hash).Bind(2, r.username).Bind(3, r.csrf_token).Bind(4, r.created_ms);
  s.Bind(5, r.last_seen_ms).Bind(6, r.ends_ms).Bind(7, r.idle_ends_ms);
  return s.Run();
}

constexpr const char* kUsersExist =
    "the appliance already has users; bootstrap runs once (add users as an admin)";

// Sets `assignments` on the user's row. NotFound for an unknown user.
Status UpdateUser(sqlite3* db, const std::string& username, const char* assignments) {
  std::string sql = std::string("UPDATE auth_users SET ") + assignments + " WHERE username = ?1";
  SqlStatement s(db, sql.c_str());
  s.Bind(1, username);
  KIMI_RETURN_IF_ERROR(s.Run());
  if (s.Changes() == 0) return Status::NotFound("no user " + username);
  return Status::OK();
}

}  // namespace

Result<int64_t> AuthStore::HashedCredentials() {
  int64_t n = 0;
  KIMI_RETURN_IF_ERROR(store_->Read([&](sqlite3* db) -> Status {
    SqlStatement count(db, "SELECT (SELECT COUNT(*) FROM auth_keys) + (SELECT COUNT(*) FROM auth_sessions)");
    return count.ForEachRow([&] { n = count.Int(0); });
  }));
  return n;
}

Status AuthStore::InsertKey(const KeyRecord& k, const Digest& key_hash, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    static const std::string sql =
        std::string("INSERT INTO auth_keys(id, key_hash, name, owner, role, models, created_ms, expires_ms, ") +
        kLimitColumns + ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    SqlStatement s(db, sql.c_str());
    s.Bind(1, k.id).BindBlob(2, key_hash).Bind(3, k.name).Bind(4, k.owner).Bind(5, k.role);
    s.Bind(6, ModelsToText(k.models)).Bind(7, k.created_ms).Bind(8, k.expires_ms);
    BindLimitColumns(s, 9, k.limits);
    KIMI_RETURN_IF_ERROR(s.Run());
    return InsertEvent(db, event);
  });
}

void AuthStore::Close() {
  if (!find_key_.ok()) return;  // never prepared (it is reset after each use)
  store_->Read([this](sqlite3*) {
    find_key_ = SqlStatement();
    return Status::OK();
  });
}

Result<std::optional<KeyMatch>> AuthStore::FindKeyByHash(const Digest& key_hash) {
  std::optional<KeyMatch> found;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    static const std::string sql =
        "SELECT " + kKeyColumns + " FROM auth_keys WHERE key_hash = ?1 OR previous_key_hash = ?1";
    KIMI_RETURN_IF_ERROR(find_key_.PrepareOnce(db, sql));
    Result<bool> row = find_key_.BindBlob(1, key_hash).Step();
    // The index lookup is on a keyed hash the client cannot compute, so its timing says
    // nothing about the secret; the constant-time compare guards against any collation slip.
    if (row.ok() && *row) {
      if (DigestEquals(DigestColumn(find_key_, kKeyHashColumn), key_hash)) {
        found = KeyMatch{ReadKey(find_key_), false};
      } else if (DigestEquals(DigestColumn(find_key_, kPreviousHashColumn), key_hash)) {
        found = KeyMatch{ReadKey(find_key_), true};
      }
    }
    find_key_.Reset();  // kept between requests: it must not hold a read snapshot
    return row.status();
  });
  if (!status.ok()) return status;
  return found;
}

namespace {

// One page of `table` in `order`, narrowed by `where` (whose ?1 is the search pattern), each
// row read by `read`, with the count of every matching row.
template <typename T>
Result<ListPage<T>> ReadPage(store::Store* store, const std::string& columns, const char* table, const char* where,
                             const char* order, const ListQuery& query, T (*read)(const SqlStatement&)) {
  ListPage<T> page;
  const std::string pattern = store::LikeContains(query.search);
  Status status = store->Read([&](sqlite3* db) -> Status {
    std::string select = "SELECT " + columns + " FROM " + table + where + " ORDER BY " + order + " LIMIT ?2 OFFSET ?3";
    SqlStatement s(db, select.c_str());
    s.Bind(1, pattern).Bind(2, query.limit).Bind(3, query.offset);
    KIMI_RETURN_IF_ERROR(s.ForEachRow([&] { page.items.push_back(read(s)); }));
    std::string count = std::string("SELECT count(*) FROM ") + table + where;
    SqlStatement c(db, count.c_str());
    c.Bind(1, pattern);
    return c.ForEachRow([&] { page.total = c.Int(0); });
  });
  if (!status.ok()) return status;
  return page;
}

}  // namespace

Result<ListPage<KeyRecord>> AuthStore::ListKeys(const ListQuery& query) {
  return ReadPage<KeyRecord>(store_, kKeyColumns, "auth_keys", kKeySearch, "created_ms, id", query, &ReadKey);
}

Result<std::vector<KeyRecord>> AuthStore::ListKeys() {
  KIMI_ASSIGN_OR_RETURN(ListPage<KeyRecord> page, ListKeys(ListQuery{}));
  return std::move(page.items);
}

Status AuthStore::RotateKey(const std::string& id, const Digest& new_hash, int64_t now_ms, int64_t previous_until_ms,
                            const AuthEvent& event, KeyRecord* out) {
  return store_->Write([&](sqlite3* db) -> Status {
    KIMI_ASSIGN_OR_RETURN(KeyRecord key, ReadKeyById(db, id));
    if (key.revoked_ms != 0) return Status::FailedPrecondition("API key " + id + " is revoked; it cannot be rotated");
    if (key.expires_ms != 0 && now_ms >= key.expires_ms) {
      return Status::FailedPrecondition("API key " + id + " has expired; make a new one instead");
    }
    SqlStatement write(db,
                       "UPDATE auth_keys SET previous_key_hash = key_hash, previous_expires_ms = ?3, key_hash = ?2 "
                       "WHERE id = ?1");
    write.Bind(1, id).BindBlob(2, new_hash).Bind(3, previous_until_ms);
    KIMI_RETURN_IF_ERROR(write.Run());
    KIMI_RETURN_IF_ERROR(InsertEvent(db, event));
    key.previous_expires_ms = previous_until_ms;
    *out = std::move(key);
    return Status::OK();
  });
}

Status AuthStore::EditKey(const std::string& id, const std::function<Result<AuthEvent>(KeyRecord*)>& edit,
                          KeyRecord* out) {
  return store_->Write([&](sqlite3* db) -> Status {
    KIMI_ASSIGN_OR_RETURN(KeyRecord key, ReadKeyById(db, id));
    KIMI_ASSIGN_OR_RETURN(AuthEvent event, edit(&key));
    static const std::string update =
        "UPDATE auth_keys SET role = ?2, models = ?3, requests_per_minute = ?4, tokens_per_minute = ?5, "
        "tokens_per_day = ?6, tokens_per_month = ?7, max_concurrent_streams = ?8 WHERE id = ?1";
    SqlStatement write(db, update.c_str());
    write.Bind(1, id).Bind(2, key.role).Bind(3, ModelsToText(key.models));
    BindLimitColumns(write, 4, key.limits);
    KIMI_RETURN_IF_ERROR(write.Run());
    KIMI_RETURN_IF_ERROR(InsertEvent(db, event));
    *out = std::move(key);
    return Status::OK();
  });
}

Status AuthStore::SetRoleLimits(const std::string& role, const KeyLimits& l, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    static const std::string sql = std::string("INSERT OR REPLACE INTO auth_role_limits(role, ") + kLimitColumns +
                                   ") VALUES(?1, ?2, ?3, ?4, ?5, ?6)";
    SqlStatement s(db, sql.c_str());
    s.Bind(1, role);
    BindLimitColumns(s, 2, l);
    KIMI_RETURN_IF_ERROR(s.Run());
    return InsertEvent(db, event);
  });
}

Status AuthStore::RevokeKey(const std::string& id, int64_t now_ms, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement check(db, "SELECT revoked_ms FROM auth_keys WHERE id = ?1");
    check.Bind(1, id);
    KIMI_ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row) return Status::NotFound("no API key with id " + id);
    if (check.Int(0) != 0) return Status::FailedPrecondition("API key " + id + " is already revoked");
    SqlStatement s(db, "UPDATE auth_keys SET revoked_ms = ?2 WHERE id = ?1");
    s.Bind(1, id).Bind(2, now_ms);
    KIMI_RETURN_IF_ERROR(s.Run());
    return InsertEvent(db, event);
  });
}

Status AuthStore::TouchKeys(const std::map<std::string, int64_t>& last_used_ms) {
  if (last_used_ms.empty()) return Status::OK();
  return store_->Write([&](sqlite3* db) -> Status {
    for (const auto& [id, ms] : last_used_ms) {
      SqlStatement s(db, "UPDATE auth_keys SET last_used_ms = max(last_used_ms, ?2) WHERE id = ?1");
      s.Bind(1, id).Bind(2, ms);
      KIMI_RETURN_IF_ERROR(s.Run());
    }
    return Status::OK();
  });
}

Status AuthStore::InsertUser(const UserRecord& u, const AuthEvent& event, bool only_if_none) {
  return store_->Write([&](sqlite3* db) -> Status {
    if (only_if_none) {
      SqlStatement any(db, "SELECT 1 FROM auth_users LIMIT 1");
      KIMI_ASSIGN_OR_RETURN(bool row, any.Step());
      if (row) return Status::FailedPrecondition(kUsersExist);
    }
    SqlStatement check(db, "SELECT 1 FROM auth_users WHERE username = ?1");
    check.Bind(1, u.username);
    KIMI_ASSIGN_OR_RETURN(bool taken, check.Step());
    if (taken) return Status::AlreadyExists("user " + u.username + " exists");
    SqlStatement s(db,
                   "INSERT INTO auth_users(username, password_hash, role, disabled, must_change_password, created_ms) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    s.Bind(1, u.username).Bind(2, u.password_hash).Bind(3, u.role).Bind(4, int64_t{u.disabled});
    s.Bind(5, int64_t{u.must_change_password}).Bind(6, u.created_ms);
    KIMI_RETURN_IF_ERROR(s.Run());
    return InsertEvent(db, event);
  });
}

Result<std::optional<UserRecord>> AuthStore::FindUser(const std::string& username) {
  std::optional<UserRecord> found;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    std::string sql = std::string("SELECT ") + kUserColumns + " FROM auth_users WHERE username = ?1";
    SqlStatement s(db, sql.c_str());
    s.Bind(1, username);
    KIMI_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) found = ReadUser(s);
    return Status::OK();
  });
  if (!status.ok()) return status;
  return found;
}

Result<ListPage<UserRecord>> AuthStore::ListUsers(const ListQuery& query) {
  return ReadPage<UserRecord>(store_, kUserColumns, "auth_users", kUserSearch, "username", query, &ReadUser);
}

Result<std::vector<UserRecord>> AuthStore::ListUsers() {
  KIMI_ASSIGN_OR_RETURN(ListPage<UserRecord> page, ListUsers(ListQuery{}));
  return std::move(page.items);
}

Result<LoginAttempt> AuthStore::BeginLoginAttempt(const std::string& username, int64_t now_ms,
                                                 const std::function<int64_t(int64_t failures)>& lock_until) {
  LoginAttempt attempt;
  Status status = store_->Write([&](sqlite3* db) -> Status {
    std::string select = std::string("SELECT ") + kUserColumns + " FROM auth_users WHERE username = ?1";
    SqlStatement read(db, select.c_str());
    read.Bind(1, username);
    KIMI_ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) {
      attempt.refusal = LoginAttempt::Refusal::kUnknownUser;
      return Status::OK();
    }
    attempt.user = ReadUser(read);
    if (attempt.user.disabled) {
      attempt.refusal = LoginAttempt::Refusal::kDisabled;
      return Status::OK();
    }
    if (attempt.user.locked_until_ms > now_ms) {
      attempt.refusal = LoginAttempt::Refusal::kLocked;
      return Status::OK();
    }
    // The count grows in SQL, inside the transaction that read it: no other attempt, in this
    // process or in kimictl's, can write between the read and the write.
    SqlStatement count(db, "UPDATE auth_users SET failed_logins = failed_logins + 1 WHERE username = ?1 "
                           "RETURNING failed_logins");
    count.Bind(1, username);
    KIMI_RETURN_IF_ERROR(count.ForEachRow([&] { attempt.user.failed_logins = count.Int(0); }));
    int64_t until = lock_until(attempt.user.failed_logins);
    if (until == 0) return Status::OK();
    SqlStatement lock(db, "UPDATE auth_users SET locked_until_ms = ?2 WHERE username = ?1");
    lock.Bind(1, username).Bind(2, until);
    KIMI_RETURN_IF_ERROR(lock.Run());
    attempt.user.locked_until_ms = until;
    return Status::OK();
  });
  if (!status.ok()) return status;
  return attempt;
}

Status AuthStore::RecordLoginSuccess(const std::string& username, int64_t now_ms, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "UPDATE auth_users SET failed_logins = 0, locked_until_ms = 0, last_login_ms = ?2 "
                   "WHERE username = ?1");
    s.Bind(1, username).Bind(2, now_ms);
    KIMI_RETURN_IF_ERROR(s.Run());
    return InsertEvent(db, event);
  });
}

Status AuthStore::UnlockUser(const std::string& username, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    KIMI_RETURN_IF_ERROR(UpdateUser(db, username, "failed_logins = 0, locked_until_ms = 0"));
    return InsertEvent(db, event);
  });
}

Status AuthStore::EnableUser(const std::string& username, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    KIMI_RETURN_IF_ERROR(UpdateUser(db, username, "disabled = 0"));
    return InsertEvent(db, event);
  });
}

Status AuthStore::SetPassword(const std::string& username, const std::string& hash, bool must_change_password,
                              const StoredSession* successor, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "UPDATE auth_users SET password_hash = ?2, must_change_password = ?3, failed_logins = 0, "
                   "locked_until_ms = 0 WHERE username = ?1");
    s.Bind(1, username).Bind(2, hash).Bind(3, int64_t{must_change_password});
    KIMI_RETURN_IF_ERROR(s.Run());
    if (s.Changes() == 0) return Status::NotFound("no user " + username);
    SqlStatement drop(db, "DELETE FROM auth_sessions WHERE username = ?1");
    KIMI_RETURN_IF_ERROR(drop.Bind(1, username).Run());
    if (successor != nullptr) KIMI_RETURN_IF_ERROR(InsertSessionRow(db, *successor));
    return InsertEvent(db, event);
  });
}

Status AuthStore::DisableUser(const std::string& username, int64_t now_ms, const AuthEvent& event,
                              const std::function<AuthEvent(const std::string& key_id)>& key_event) {
  return store_->Write([&](sqlite3* db) -> Status {
    KIMI_RETURN_IF_ERROR(UpdateUser(db, username, "disabled = 1"));
    SqlStatement drop(db, "DELETE FROM auth_sessions WHERE username = ?1");
    drop.Bind(1, username);
    KIMI_RETURN_IF_ERROR(drop.Run());
    KIMI_RETURN_IF_ERROR(InsertEvent(db, event));
    SqlStatement revoke(db, "UPDATE auth_keys SET revoked_ms = ?2 WHERE owner = ?1 AND revoked_ms = 0 RETURNING id");
    revoke.Bind(1, username).Bind(2, now_ms);
    std::vector<std::string> revoked;
    KIMI_RETURN_IF_ERROR(revoke.ForEachRow([&] { revoked.push_back(revoke.Text(0)); }));
    for (const std::string& id : revoked) KIMI_RETURN_IF_ERROR(InsertEvent(db, key_event(id)));
    return Status::OK();
  });
}

Status AuthStore::InsertSession(const Digest& id_hash, const SessionRecord& r) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement ended(db, "DELETE FROM auth_sessions WHERE ends_ms <= ?1 OR idle_ends_ms <= ?1");
    KIMI_RETURN_IF_ERROR(ended.Bind(1, r.created_ms).Run());
    return InsertSessionRow(db, StoredSession{id_hash, r});
  });
}

Result<std::optional<SessionRecord>> AuthStore::FindSession(const Digest& id_hash) {
  std::optional<SessionRecord> found;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "SELECT username, csrf_token, created_ms, last_seen_ms, ends_ms, idle_ends_ms, id_hash "
                   "FROM auth_sessions WHERE id_hash = ?1");
    KIMI_ASSIGN_OR_RETURN(bool row, s.BindBlob(1, id_hash).Step());
    if (row && DigestEquals(DigestColumn(s, 6), id_hash)) {
      found = SessionRecord{s.Text(0), s.Text(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5)};
    }
    return Status::OK();
  });
  if (!status.ok()) return status;
  return found;
}

Status AuthStore::TouchSession(const Digest& id_hash, int64_t now_ms, int64_t idle_ends_ms) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db, "UPDATE auth_sessions SET last_seen_ms = ?2, idle_ends_ms = ?3 WHERE id_hash = ?1");
    s.BindBlob(1, id_hash).Bind(2, now_ms).Bind(3, idle_ends_ms);
    return s.Run();
  });
}

Status AuthStore::DeleteSession(const Digest& id_hash, const AuthEvent* event) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db, "DELETE FROM auth_sessions WHERE id_hash = ?1");
    s.BindBlob(1, id_hash);
    KIMI_RETURN_IF_ERROR(s.Run());
    return event ? InsertEvent(db, *event) : Status::OK();
  });
}

Status AuthStore::AppendEvent(const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) { return InsertEvent(db, event); });
}

Result<std::vector<AuthEvent>> AuthStore::PendingEvents(int limit) {
  std::vector<AuthEvent> out;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "SELECT id, time_ms, actor, role, source, action, target, outcome, detail, record FROM auth_events "
                   "ORDER BY id LIMIT ?1");
    s.Bind(1, int64_t{limit});
    return s.ForEachRow([&] {
      out.push_back(AuthEvent{s.Int(0), s.Int(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), s.Text(6), s.Text(7),
                              s.Text(8), s.Text(9)});
    });
  });
  if (!status.ok()) return status;
  return out;
}

Status AuthStore::DeleteEventsThrough(int64_t id) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db, "DELETE FROM auth_events WHERE id <= ?1");
    s.Bind(1, id);
    return s.Run();
  });
}

Status InsertAuthEvent(sqlite3* db, const AuthEvent& event) { return InsertEvent(db, event); }

Status InsertAuditRecord(sqlite3* db, const audit::AuditRecord& record) {
  audit::AuditRecord r = record;
  if (r.time_ms == 0) r.time_ms = UnixMillisNow();  // the act's time, not the time the outbox moves it
  AuthEvent e{0, r.time_ms, r.actor, r.role, r.source, r.action, r.target, r.outcome, r.detail, {}};
  e.record = audit::RecordToJson(r).dump();
  return InsertEvent(db, e);
}

}  // namespace kimi::auth
