// The auth module's tables in appliance.db (component "auth" of migrations/all_migrations.h).
// Released migrations never change; a new column is a new migration.
// Public header of auth/: other folders include it.
//   auth_keys      API keys: public id, keyed hash of the secret, metadata, revocation, use
//   auth_users     console users: Argon2id hash, role, lockout state
//   auth_sessions  console sessions: keyed hash of the session id, CSRF token, times and
//                  the deadlines the settings gave it (migration 9)
//   auth_usage     tokens and requests per key per UTC day and month (quotas, the console)
//   auth_rate_buckets  requests-per-minute buckets, saved so a restart does not refill them
//   auth_token_buckets tokens-per-minute buckets, likewise
//   auth_role_limits   the limits of each role (key_limits.h); a key gets the stricter of
//                      its own and its role's
//   auth_budgets       soft monthly token budgets per key or per owner, with an alert
//                      threshold (budget_store.h); they warn, the quotas refuse
//   auth_budget_alerts the month each budget first crossed its threshold: one row, so one
//                      audit record, per budget and month
//   (auth_keys.previous_key_hash / previous_expires_ms: the secret a rotation replaced and
//   when it stops working, migration 7)
//   auth_events    outbox of auth events (logins, key and user changes) that the daemon moves
//                  into the audit log; kimictl writes here in the same transaction as its
//                  change, because only the daemon may append to the audit log
#pragma once

#include "store/store.h"

namespace kimi::auth {

inline constexpr store::Migration kAuthMigrations[] = {
    {"auth", 1, "create auth_keys, auth_users, auth_sessions, auth_events",
     "CREATE TABLE auth_keys("
     " id TEXT PRIMARY KEY,"
     " key_hash BLOB NOT NULL UNIQUE,"
     " name TEXT NOT NULL,"
     " owner TEXT NOT NULL,"
     " role TEXT NOT NULL,"
     " models TEXT NOT NULL,"
     " created_ms INTEGER NOT NULL,"
     " expires_ms INTEGER NOT NULL,"
     " revoked_ms INTEGER NOT NULL DEFAULT 0,"
     " last_used_ms INTEGER NOT NULL DEFAULT 0);"
     "CREATE TABLE auth_users("
     " username TEXT PRIMARY KEY,"
     " password_hash TEXT NOT NULL,"
     " role TEXT NOT NULL,"
     " disabled INTEGER NOT NULL DEFAULT 0,"
     " must_change_password INTEGER NOT NULL,"
     " failed_logins INTEGER NOT NULL DEFAULT 0,"
     " locked_until_ms INTEGER NOT NULL DEFAULT 0,"
     " created_ms INTEGER NOT NULL,"
     " last_login_ms INTEGER NOT NULL DEFAULT 0);"
     "CREATE TABLE auth_sessions("
     " id_hash BLOB PRIMARY KEY,"
     " username TEXT NOT NULL REFERENCES auth_users(username) ON DELETE CASCADE,"
     " csrf_token TEXT NOT NULL,"
     " created_ms INTEGER NOT NULL,"
     " last_seen_ms INTEGER NOT NULL);"
     "CREATE TABLE auth_events("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " time_ms INTEGER NOT NULL,"
     " actor TEXT NOT NULL,"
     " role TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " action TEXT NOT NULL,"
     " target TEXT NOT NULL,"
     " outcome TEXT NOT NULL,"
     " detail TEXT NOT NULL);"},
    {"auth", 2, "per-key requests-per-minute limit",
     "ALTER TABLE auth_keys ADD COLUMN requests_per_minute INTEGER NOT NULL DEFAULT 0;"},
    {"auth", 3, "per-key token quotas and stream limit; usage per UTC day and month; rate buckets",
     "ALTER TABLE auth_keys ADD COLUMN tokens_per_day INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE auth_keys ADD COLUMN tokens_per_month INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE auth_keys ADD COLUMN max_concurrent_streams INTEGER NOT NULL DEFAULT 0;"
     "CREATE TABLE auth_usage("
     " key_id TEXT NOT NULL,"
     " period TEXT NOT NULL,"  // 'day' or 'month'
     " period_start_ms INTEGER NOT NULL,"
     " requests INTEGER NOT NULL,"
     " prompt_tokens INTEGER NOT NULL,"
     " completion_tokens INTEGER NOT NULL,"
     " PRIMARY KEY(key_id, period, period_start_ms));"
     "CREATE TABLE auth_rate_buckets("
     " key_id TEXT PRIMARY KEY,"
     " tokens REAL NOT NULL,"
     " updated_ms INTEGER NOT NULL);"},
    {"auth", 4, "tokens per minute per key; limits per role; tokens-per-minute buckets",
     "ALTER TABLE auth_keys ADD COLUMN tokens_per_minute INTEGER NOT NULL DEFAULT 0;"
     "CREATE TABLE auth_role_limits("
     " role TEXT PRIMARY KEY,"
     " requests_per_minute INTEGER NOT NULL,"
     " tokens_per_minute INTEGER NOT NULL,"
     " tokens_per_day INTEGER NOT NULL,"
     " tokens_per_month INTEGER NOT NULL,"
     " max_concurrent_streams INTEGER NOT NULL);"
     "CREATE TABLE auth_token_buckets("
     " key_id TEXT PRIMARY KEY,"
     " tokens REAL NOT NULL,"
     " updated_ms INTEGER NOT NULL);"},
    // Key owners were free text; from now on one is a user or a system principal (principal.h),
    // and a key whose owner is a disabled or missing user is refused. Owners that name no user
    // become "system", each change an auth event, so that no key stops working unannounced.
    {"auth", 5, "key owners are users or system principals",
     "INSERT INTO auth_events(time_ms, actor, role, source, action, target, outcome, detail)"
     " SELECT CAST(strftime('%s', 'now') AS INTEGER) * 1000, 'kimi-appliance', 'system', 'local',"
     " 'auth.key_owner_changed', id, 'ok',"
     " 'owner ' || quote(substr(owner, 1, 64)) || ' -> system: not a user name'"
     " FROM auth_keys WHERE owner NOT IN ('system', 'installer') AND owner NOT IN (SELECT username FROM auth_users);"
     "UPDATE auth_keys SET owner = 'system'"
     " WHERE owner NOT IN ('system', 'installer') AND owner NOT IN (SELECT username FROM auth_users);"},
    // The Usage screen reads every key's days of a range; the primary key leads with the key.
    {"auth", 6, "monthly token budgets per key and owner, their alerts; usage by period",
     "CREATE TABLE auth_budgets("
     " scope TEXT NOT NULL,"  // 'key' or 'owner'
     " subject TEXT NOT NULL,"  // key id or owner name
     " tokens_per_month INTEGER NOT NULL,"
     " alert_percent INTEGER NOT NULL,"
     " updated_ms INTEGER NOT NULL,"
     " PRIMARY KEY(scope, subject));"
     "CREATE TABLE auth_budget_alerts("
     " scope TEXT NOT NULL,"
     " subject TEXT NOT NULL,"
     " month_start_ms INTEGER NOT NULL,"
     " time_ms INTEGER NOT NULL,"
     " tokens INTEGER NOT NULL,"  // the month's usage when the crossing was seen
     " threshold_tokens INTEGER NOT NULL,"
     " PRIMARY KEY(scope, subject, month_start_ms));"
     "CREATE INDEX auth_usage_by_period ON auth_usage(period, period_start_ms);"},
    // A rotation gives a key a new secret and keeps the old one valid until previous_expires_ms
    // (the grace period the operator chose); NULL: no old secret. The index serves the lookup
    // of every request by either hash.
    {"auth", 7, "a key's previous secret, valid until the end of its rotation's grace period",
     "ALTER TABLE auth_keys ADD COLUMN previous_key_hash BLOB;"
     "ALTER TABLE auth_keys ADD COLUMN previous_expires_ms INTEGER NOT NULL DEFAULT 0;"
     "CREATE UNIQUE INDEX auth_keys_previous_key_hash ON auth_keys(previous_key_hash);"},
    // The outbox also carries the whole audit record (audit::RecordToJson) of a change outside
    // the auth tables (a policy version, a model act), written in that change's transaction so
    // that the change and its record commit together; '' for auth's own events.
    {"auth", 8, "the outbox carries whole audit records of other modules' changes",
     "ALTER TABLE auth_events ADD COLUMN record TEXT NOT NULL DEFAULT '';"},
    // A session ends at the deadlines of the settings it was made and last used under (or
    // earlier, when the settings are lowered): judged only by the settings of its next use, a
    // session that had timed out was valid again once a timeout was raised. Sessions made before
    // carry no deadlines and the settings they had are unknown, so they end here: console users
    // sign in again once after the upgrade.
    {"auth", 9, "a session's own deadlines: absolute, and idle from its last use",
     "DELETE FROM auth_sessions;"
     "ALTER TABLE auth_sessions ADD COLUMN ends_ms INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE auth_sessions ADD COLUMN idle_ends_ms INTEGER NOT NULL DEFAULT 0;"},
};

}  // namespace kimi::auth
