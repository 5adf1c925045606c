#include "auth/authenticator.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "auth/api_key.h"
#include "auth/lifecycle_state.h"
#include "auth/test_auth_store.h"

namespace kimi::auth {
namespace {

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_store_.status().ok()) << test_store_.status().ToString();
    db_ = test_store_.db();
    store_ = test_store_.store();
    AuthOptions options;
    options.password = PasswordParams{1, 8192, 12};
    options.lockout_threshold = 3;
    options.lockout_base_ms = 1000;
    options.lockout_max_ms = 8000;
    options.session_idle_timeout_ms = 60'000;
    options.session_absolute_timeout_ms = 300'000;
    options.clock_ms = [this] { return now_ms_; };
    std::array<uint8_t, 32> secret{};
    secret.fill(7);
    auth_ = std::make_unique<Authenticator>(store_, ServerSecret::FromBytes(secret), options);
    ASSERT_TRUE(auth_->AddUser(admin_, "alice", Role::kUser).ok());
  }
  // Replaces the authenticator with one using `options` (on the same store and clock).
  void Restart(AuthOptions options) {
    options.clock_ms = [this] { return now_ms_; };
    std::array<uint8_t, 32> secret{};
    secret.fill(7);
    auth_ = std::make_unique<Authenticator>(store_, ServerSecret::FromBytes(secret), options);
  }
  void Sql(const std::string& sql) {
    ASSERT_TRUE(db_->Write([&](sqlite3* db) { return store::Exec(db, sql); }).ok());
  }
  std::vector<AuthEvent> PendingEvents() {
    Result<std::vector<AuthEvent>> events = store_->PendingEvents(100'000);
    EXPECT_TRUE(events.ok());
    return events.ok() ? *events : std::vector<AuthEvent>{};
  }
  void TearDown() override { auth_.reset(); }

  Result<Principal> WithKey(const std::string& key) { return auth_->Authenticate(Credentials{key, {}, {}, {}, false}); }
  Result<Principal> WithSession(const Session& s, bool state_changing, std::string_view csrf) {
    return auth_->Authenticate(Credentials{{}, {}, s.session_id, csrf, state_changing});
  }
  // Logs in as a fresh user whose one-time password is already changed.
  Session LoggedInUser(const std::string& name, Role role) {
    std::string otp = *auth_->AddUser(admin_, name, role);
    Result<Session> first = auth_->Login(name, otp, "test");
    EXPECT_TRUE(first.ok());
    EXPECT_TRUE(auth_->ChangePassword(first->principal, otp, "a-new-password-1", "test").ok());
    Result<Session> s = auth_->Login(name, "a-new-password-1", "test");
    EXPECT_TRUE(s.ok());
    return *s;
  }
  size_t PendingEventsWithAction(const std::string& action) {
    size_t n = 0;
    Result<std::vector<AuthEvent>> events = store_->PendingEvents(1000);
    EXPECT_TRUE(events.ok());
    for (const AuthEvent& e : *events) n += e.action == action;
    return n;
  }

  TestAuthStore test_store_;
  int64_t now_ms_ = 1'800'000'000'000;
  Actor admin_{"root-admin", "admin", "local"};
  store::Store* db_ = nullptr;
  AuthStore* store_ = nullptr;
  std::unique_ptr<Authenticator> auth_;
};

TEST_F(AuthenticatorTest, KeyAuthenticatesWithItsRoleAndIdButNeverStoresTheSecret) {
  Result<CreatedKey> key = auth_->CreateKey(admin_, NewKey{"ci", "alice", Role::kUser, {"k3"}, 0});
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  Result<Principal> p = WithKey(key->secret);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->id, key->record.id);
  EXPECT_EQ(p->role, Role::kUser);
  EXPECT_EQ(p->owner, "alice");
  EXPECT_TRUE(Authenticator::CheckModelAllowed(*p, "k3").ok());
  EXPECT_EQ(Authenticator::CheckModelAllowed(*p, "other").code(), Status::Code::kPermissionDenied);
  // The x-api-key header works the same.
  EXPECT_TRUE(auth_->Authenticate(Credentials{{}, key->secret, {}, {}, false}).ok());

  // Nothing in the database contains the secret's base62 digits.
  std::string digits = key->secret.substr(8);
  bool found = false;
  ASSERT_TRUE(db_->Read([&](sqlite3* db) {
    // Every column of every row, as text (a blob's bytes included).
    store::SqlStatement keys(db, "SELECT * FROM auth_keys");
    return keys.ForEachRow([&] {
      for (int c = 0; c < keys.ColumnCount(); ++c) {
        if (keys.Text(c).find(digits) != std::string::npos) found = true;
      }
    });
  }).ok());
  EXPECT_FALSE(found);
}

TEST_F(AuthenticatorTest, UnknownMalformedAndConflictingKeysAreUnauthenticated) {
  EXPECT_EQ(WithKey(GenerateApiKey()).status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(WithKey("sk-kimi-short").status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(auth_->Authenticate(Credentials{}).status().code(), Status::Code::kUnauthenticated);
  std::string real = auth_->CreateKey(admin_, NewKey{"a", "", Role::kAdmin, {}, 0})->secret;
  Result<Principal> both = auth_->Authenticate(Credentials{real, GenerateApiKey(), {}, {}, false});
  EXPECT_EQ(both.status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(both.status().message().find(real), std::string::npos);
}

TEST_F(AuthenticatorTest, RevocationTakesEffectOnTheNextRequest) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"ci", "", Role::kUser, {}, 0});
  ASSERT_TRUE(WithKey(key.secret).ok());
  ASSERT_TRUE(auth_->RevokeKey(admin_, key.record.id).ok());
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(auth_->RevokeKey(admin_, key.record.id).code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(auth_->RevokeKey(admin_, "key_0000").code(), Status::Code::kNotFound);
  EXPECT_EQ(PendingEventsWithAction("auth.key_revoked"), 1u);
  EXPECT_EQ(PendingEventsWithAction("auth.key_created"), 1u);
}

TEST_F(AuthenticatorTest, ExpiredKeyIsRefused) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"short", "", Role::kUser, {}, now_ms_ + 1000});
  EXPECT_TRUE(WithKey(key.secret).ok());
  now_ms_ += 1000;
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_FALSE(auth_->CreateKey(admin_, NewKey{"past", "", Role::kUser, {}, now_ms_ - 1}).ok());
}

TEST_F(AuthenticatorTest, KeyRateLimitComesFromTheStoredKey) {
  NewKey spec{"limited", "", Role::kUser, {}, 0};
  spec.limits.requests_per_minute = 2;
  CreatedKey key = *auth_->CreateKey(admin_, spec);
  int64_t retry = 0;
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(auth_->Admit(*WithKey(key.secret), &retry).ok());
  EXPECT_EQ(auth_->Admit(*WithKey(key.secret), &retry).code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(retry, 30);
  now_ms_ += 30'000;
  EXPECT_TRUE(auth_->Admit(*WithKey(key.secret), &retry).ok());
  // Keys without a limit, and sessions, are never refused.
  CreatedKey free = *auth_->CreateKey(admin_, NewKey{"free", "", Role::kUser, {}, 0});
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(auth_->Admit(*WithKey(free.secret), &retry).ok());
  spec.limits.requests_per_minute = -1;
  EXPECT_EQ(auth_->CreateKey(admin_, spec).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(AuthenticatorTest, AnEditedKeyHasItsNewRoleModelsAndLimitsAtTheNextRequest) {
  Result<CreatedKey> key = auth_->CreateKey(admin_, NewKey{"ci", "alice", Role::kUser, {"k3"}, 0});
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  ASSERT_TRUE(WithKey(key->secret).ok());
  KeyChange change;
  change.role = Role::kOperator;
  change.models = std::vector<std::string>{"k3", "k3-small"};
  change.limits[0] = 7;  // kKeyLimitFields[0]: requests_per_minute
  Result<KeyRecord> edited = auth_->UpdateKey(admin_, key->record.id, change);
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  EXPECT_EQ(edited->role, "operator");
  EXPECT_EQ(edited->name, "ci");  // what the change leaves out keeps its value

  Result<Principal> p = WithKey(key->secret);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->role, Role::kOperator);
  EXPECT_EQ(p->limits.requests_per_minute, 7);
  EXPECT_TRUE(Authenticator::CheckModelAllowed(*p, "k3-small").ok());

  // One event, whose detail is the difference and never the secret.
  Result<std::vector<AuthEvent>> events = store_->PendingEvents(1000);
  ASSERT_TRUE(events.ok());
  std::vector<AuthEvent> updates;
  for (const AuthEvent& e : *events) {
    if (e.action == "auth.key_updated") updates.push_back(e);
  }
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].target, key->record.id);
  EXPECT_EQ(updates[0].actor, "root-admin");
  EXPECT_EQ(updates[0].detail, "role user -> operator; models k3 -> k3,k3-small; requests_per_minute 0 -> 7");
  EXPECT_EQ(updates[0].detail.find(key->secret.substr(8)), std::string::npos);

  // Every model again, and the limit lifted.
  KeyChange back;
  back.models = std::vector<std::string>{};
  back.limits[0] = 0;
  ASSERT_TRUE(auth_->UpdateKey(admin_, key->record.id, back).ok());
  p = WithKey(key->secret);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(Authenticator::CheckModelAllowed(*p, "anything").ok());
  EXPECT_EQ(p->limits.requests_per_minute, 0);
}

TEST_F(AuthenticatorTest, EditsOfUnknownRevokedOrInvalidKeysAreRefusedAndChangeNothing) {
  KeyChange change;
  change.role = Role::kAdmin;
  EXPECT_EQ(auth_->UpdateKey(admin_, "key_unknown", change).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(auth_->UpdateKey(admin_, "key_unknown", KeyChange{}).status().code(), Status::Code::kInvalidArgument);

  Result<CreatedKey> key = auth_->CreateKey(admin_, NewKey{"ci", "alice", Role::kUser, {}, 0});
  ASSERT_TRUE(key.ok());
  KeyChange negative;
  negative.role = Role::kAdmin;
  negative.limits[1] = -1;
  EXPECT_EQ(auth_->UpdateKey(admin_, key->record.id, negative).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(WithKey(key->secret)->role, Role::kUser);  // rolled back as a whole

  ASSERT_TRUE(auth_->RevokeKey(admin_, key->record.id).ok());
  EXPECT_EQ(auth_->UpdateKey(admin_, key->record.id, change).status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(PendingEventsWithAction("auth.key_updated"), 0u);
}

TEST_F(AuthenticatorTest, LastUseIsWrittenInBatches) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"ci", "", Role::kUser, {}, 0});
  now_ms_ += 5;
  ASSERT_TRUE(WithKey(key.secret).ok());
  Result<std::vector<KeyRecord>> keys = auth_->ListKeys();  // flushes
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].last_used_ms, now_ms_);
}

TEST_F(AuthenticatorTest, RoleChecksAndPasswordChangeGate) {
  Principal p;
  p.role = Role::kAuditor;
  EXPECT_TRUE(Authenticator::Authorize(p, Permission::kAuditRead).ok());
  EXPECT_EQ(Authenticator::Authorize(p, Permission::kInference).code(), Status::Code::kPermissionDenied);
  p.role = Role::kAdmin;
  p.must_change_password = true;
  EXPECT_EQ(Authenticator::Authorize(p, Permission::kKeysManage).code(), Status::Code::kPermissionDenied);
  EXPECT_TRUE(Authenticator::Authorize(p, Permission::kSessionSelf).ok());
}

TEST_F(AuthenticatorTest, BootstrapOnceWithAOneTimePasswordThatMustBeChanged) {
  Sql("DELETE FROM auth_users");  // the fixture's user
  Result<std::string> otp = auth_->Bootstrap(Actor{"kimictl", "system", "local"}, "admin");
  ASSERT_TRUE(otp.ok()) << otp.status().ToString();
  EXPECT_EQ(auth_->Bootstrap(Actor{"kimictl", "system", "local"}, "admin2").status().code(),
            Status::Code::kFailedPrecondition);
  Result<Session> s = auth_->Login("admin", *otp, "test");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->principal.must_change_password);
  EXPECT_EQ(auth_->ChangePassword(s->principal, *otp, "short", "test").status().code(),
            Status::Code::kInvalidArgument);
  Result<Session> changed = auth_->ChangePassword(s->principal, *otp, "a-much-better-one", "test");
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  Result<Principal> after = WithSession(*changed, false, "");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->must_change_password);
  EXPECT_FALSE(auth_->Login("admin", *otp, "test").ok());
}

// The session a password was changed with stayed valid, so a copy of its id (a thief's, the
// reason to change it) outlived the change, now with the rights the one-time password lacked.
TEST_F(AuthenticatorTest, APasswordChangeEndsTheSessionItWasMadeWithAndIssuesANewOne) {
  std::string otp = *auth_->AddUser(admin_, "frank", Role::kAdmin);
  Session used = *auth_->Login("frank", otp, "test");
  Session other = *auth_->Login("frank", otp, "test");
  Result<Session> changed = auth_->ChangePassword(used.principal, otp, "a-new-password-1", "test");
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(WithSession(used, false, "").status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(WithSession(other, false, "").status().code(), Status::Code::kUnauthenticated);
  EXPECT_NE(changed->session_id, used.session_id);
  EXPECT_NE(changed->csrf_token, used.csrf_token);
  Result<Principal> next = WithSession(*changed, true, changed->csrf_token);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->role, Role::kAdmin);
  EXPECT_FALSE(next->must_change_password);
  EXPECT_EQ(WithSession(*changed, true, used.csrf_token).status().code(), Status::Code::kPermissionDenied);
}

TEST_F(AuthenticatorTest, BootstrapsAtOnceMakeOneAdmin) {
  Sql("DELETE FROM auth_users");
  AuthOptions options = auth_->options();
  options.password.mem_limit_bytes = 1 << 20;  // hashes long enough for the bootstraps to overlap
  Restart(options);
  std::vector<std::thread> threads;
  std::atomic<int> made{0};
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] { made += auth_->Bootstrap(admin_, "admin-" + std::to_string(i)).ok(); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(auth_->ListUsers()->size(), 1u);
}

TEST_F(AuthenticatorTest, LockoutWithDoublingBackoff) {
  std::string otp = *auth_->AddUser(admin_, "bob", Role::kUser);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(auth_->Login("bob", "wrong-password-" + std::to_string(i), "10.0.0.9").ok());
  EXPECT_EQ(PendingEventsWithAction("auth.account_locked"), 1u);
  // Locked: even the right password is refused, with the same message.
  Result<Session> locked = auth_->Login("bob", otp, "10.0.0.9");
  EXPECT_EQ(locked.status().message(), auth_->Login("bob", "wrong", "x").status().message());
  now_ms_ += 999;
  EXPECT_FALSE(auth_->Login("bob", otp, "10.0.0.9").ok());
  now_ms_ += 1;
  // The lock expired; another failure locks for twice as long.
  EXPECT_FALSE(auth_->Login("bob", "wrong-again-xx", "10.0.0.9").ok());
  UserRecord u = **store_->FindUser("bob");
  EXPECT_EQ(u.failed_logins, 4);
  EXPECT_EQ(u.locked_until_ms, now_ms_ + 2000);
  now_ms_ += 2000;
  ASSERT_TRUE(auth_->Login("bob", otp, "10.0.0.9").ok());
  EXPECT_EQ((**store_->FindUser("bob")).failed_logins, 0);
}

TEST_F(AuthenticatorTest, UnknownAndDisabledUsersGetTheSameAnswer) {
  Result<Session> unknown = auth_->Login("nobody", "whatever-password", "x");
  Session s = LoggedInUser("carol", Role::kOperator);
  ASSERT_TRUE(auth_->DisableUser(admin_, "carol").ok());
  Result<Session> disabled = auth_->Login("carol", "a-new-password-1", "x");
  EXPECT_EQ(unknown.status(), disabled.status());
  // Disabling ends the sessions too.
  EXPECT_EQ(WithSession(s, false, "").status().code(), Status::Code::kUnauthenticated);
}

TEST_F(AuthenticatorTest, ParallelWrongPasswordsLockTheAccountAndTheRightOneIsThenRefused) {
  AuthOptions options = auth_->options();
  options.login_attempts_per_minute_per_source = 0;  // the lock alone is under test here
  options.login_attempts_per_minute_per_user = 0;
  options.max_concurrent_password_hashes = 8;
  options.password.mem_limit_bytes = 1 << 20;  // hashes long enough for the attempts to overlap
  Restart(options);
  std::string otp = *auth_->AddUser(admin_, "erin", Role::kUser);
  std::vector<std::thread> threads;
  std::atomic<int> accepted{0};
  for (int i = 0; i < 60; ++i) {
    threads.emplace_back([&, i] { accepted += auth_->Login("erin", "wrong-guess-" + std::to_string(i), "10.0.0.7").ok(); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 0);
  UserRecord u = **store_->FindUser("erin");
  // Each attempt counted before its password was checked: the threshold-th locked the
  // account, and every later one was refused as locked without counting.
  EXPECT_EQ(u.failed_logins, 3);
  EXPECT_GT(u.locked_until_ms, now_ms_);
  std::set<std::string> counts;
  for (const AuthEvent& e : PendingEvents()) {
    if (e.target == "erin" && e.detail.find("consecutive failures") != std::string::npos) counts.insert(e.detail);
  }
  EXPECT_EQ(counts.size(), 3u);  // 1, 2 and 3: no two attempts saw the same count
  EXPECT_EQ(PendingEventsWithAction("auth.account_locked"), 1u);
  EXPECT_EQ(auth_->Login("erin", otp, "10.0.0.7").status().code(), Status::Code::kUnauthenticated);
}

TEST_F(AuthenticatorTest, EveryRefusalDoesOnePasswordVerificationAndGivesOneAnswer) {
  std::string otp = *auth_->AddUser(admin_, "frank", Role::kUser);
  ASSERT_TRUE(auth_->AddUser(admin_, "gone", Role::kUser).ok());
  ASSERT_TRUE(auth_->DisableUser(admin_, "gone").ok());
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(auth_->Login("frank", "wrong-password", "x").ok());
  struct Case {
    const char* what;
    const char* user;
    std::string password;
  };
  const Case cases[] = {{"unknown", "nobody", "some-password"},
                        {"disabled", "gone", "some-password"},
                        {"locked", "frank", otp},
                        {"wrong", "alice", "some-password"}};
  std::set<std::string> answers;
  for (const Case& c : cases) {
    uint64_t before = PasswordVerificationCount();
    Result<Session> s = auth_->Login(c.user, c.password, "x");
    EXPECT_EQ(PasswordVerificationCount() - before, 1u) << c.what;
    EXPECT_EQ(s.status().code(), Status::Code::kUnauthenticated) << c.what;
    answers.insert(s.status().message());
  }
  EXPECT_EQ(answers.size(), 1u);
}

TEST_F(AuthenticatorTest, OversizeLoginInputsAreRefusedBeforeAnythingIsHashedOrWritten) {
  size_t events = PendingEvents().size();
  uint64_t verifications = PasswordVerificationCount();
  Result<Session> long_name = auth_->Login(std::string(7 << 20, 'a'), "some-password", "x");
  EXPECT_EQ(long_name.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(auth_->Login("alice", std::string(kMaxPasswordBytes + 1, 'p'), "x").status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(auth_->Login("bad\nname", "some-password", "x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(PendingEvents().size(), events);
  EXPECT_EQ(PasswordVerificationCount(), verifications);
  EXPECT_LT(long_name.status().message().size(), 200u);
}

TEST_F(AuthenticatorTest, ThrottledLoginsAreRefusedWithRetryAfterAndAuditedOncePerWindow) {
  AuthOptions options = auth_->options();
  options.login_attempts_per_minute_per_source = 4;
  options.login_attempts_per_minute_per_user = 2;
  Restart(options);
  uint64_t verifications = PasswordVerificationCount();
  int64_t retry = 0;
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(auth_->Login("alice", "wrong-password", "10.0.0.1:1", &retry).ok());
  for (int i = 0; i < 3; ++i) {  // a refusal for the user name still spends the address's budget
    Result<Session> refused = auth_->Login("alice", "wrong-password", "10.0.0.2:1", &retry);
    EXPECT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  }
  EXPECT_EQ(retry, 30);
  // Another user name from the first address spends that address's budget of 4.
  EXPECT_FALSE(auth_->Login("bob", "wrong-password", "10.0.0.1:2", &retry).ok());
  EXPECT_FALSE(auth_->Login("carl", "wrong-password", "10.0.0.1:3", &retry).ok());
  EXPECT_EQ(auth_->Login("dora", "wrong-password", "10.0.0.1:4", &retry).status().code(),
            Status::Code::kResourceExhausted);
  EXPECT_EQ(PasswordVerificationCount() - verifications, 4u);  // refusals hash nothing
  EXPECT_EQ(PendingEventsWithAction("auth.login_throttled"), 2u);  // one per budget, not per attempt
}

TEST_F(AuthenticatorTest, AKeyOwnerIsAnEnabledUserOrASystemPrincipal) {
  for (const char* owner : {"ghost", "bad\x01name", "Alice", "kimictl:root"}) {
    EXPECT_EQ(auth_->CreateKey(admin_, NewKey{"k", owner, Role::kUser, {}, 0}).status().code(),
              Status::Code::kInvalidArgument)
        << owner;
  }
  for (const char* owner : {"system", "installer", "alice"}) {
    Result<CreatedKey> key = auth_->CreateKey(admin_, NewKey{"k", owner, Role::kUser, {}, 0});
    ASSERT_TRUE(key.ok()) << owner;
    EXPECT_TRUE(WithKey(key->secret).ok()) << owner;
    // The record the creation answers with (POST /admin/v1/keys) said owner_disabled for a user's key.
    EXPECT_EQ(KeyStateOf(key->record, now_ms_), KeyState::kActive) << owner;
  }
  // No user may take a system principal's name, nor the name the appliance's own records
  // carry (a user "kimi-appliance" stored policy versions that read as the shipped default's).
  for (const char* name : {"system", "installer", "kimi-appliance"}) {
    const Result<std::string> added = auth_->AddUser(admin_, name, Role::kAdmin);
    EXPECT_EQ(added.status().code(), Status::Code::kInvalidArgument) << name;
    EXPECT_NE(added.status().message().find("reserved"), std::string::npos) << added.status().ToString();
  }
  // Without an owner, a key belongs to whom its creator acts for.
  EXPECT_EQ(auth_->CreateKey(admin_, NewKey{"k", "", Role::kUser, {}, 0})->record.owner, "system");
  Session s = LoggedInUser("hana", Role::kAdmin);
  Principal hana = *WithSession(s, false, "");
  EXPECT_EQ(auth_->CreateKey(Actor::Of(hana, "x"), NewKey{"k", "", Role::kUser, {}, 0})->record.owner, "hana");
  ASSERT_TRUE(auth_->DisableUser(admin_, "hana").ok());
  EXPECT_EQ(auth_->CreateKey(admin_, NewKey{"k", "hana", Role::kUser, {}, 0}).status().code(),
            Status::Code::kInvalidArgument);
}

TEST_F(AuthenticatorTest, DisablingAUserRevokesItsKeysAndItsKeysStayRefusedWhateverTheirRow) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"alice-admin", "alice", Role::kAdmin, {}, 0});
  CreatedKey other = *auth_->CreateKey(admin_, NewKey{"other", "system", Role::kAdmin, {}, 0});
  ASSERT_TRUE(WithKey(key.secret).ok());
  ASSERT_TRUE(auth_->DisableUser(admin_, "alice").ok());
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_TRUE(WithKey(other.secret).ok());
  bool audited = false;
  for (const AuthEvent& e : PendingEvents()) {
    audited |= e.action == "auth.key_revoked" && e.target == key.record.id && e.detail == "owner alice disabled";
  }
  EXPECT_TRUE(audited);
  // A stale row that says active is refused while its owner is disabled, and when the owner is gone.
  Sql("UPDATE auth_keys SET revoked_ms = 0");
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  ASSERT_TRUE(auth_->EnableUser(admin_, "alice").ok());
  EXPECT_TRUE(WithKey(key.secret).ok());
  Sql("DELETE FROM auth_users WHERE username = 'alice'");
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_TRUE(WithKey(other.secret).ok());
}

TEST_F(AuthenticatorTest, UnlockAndEnableLetAUserLogInAgain) {
  std::string otp = *auth_->AddUser(admin_, "ivan", Role::kUser);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(auth_->Login("ivan", "wrong-password", "x").ok());
  ASSERT_FALSE(auth_->Login("ivan", otp, "x").ok());
  ASSERT_TRUE(auth_->UnlockUser(admin_, "ivan").ok());
  EXPECT_EQ((**store_->FindUser("ivan")).failed_logins, 0);
  ASSERT_TRUE(auth_->Login("ivan", otp, "x").ok());
  ASSERT_TRUE(auth_->DisableUser(admin_, "ivan").ok());
  ASSERT_FALSE(auth_->Login("ivan", otp, "x").ok());
  ASSERT_TRUE(auth_->EnableUser(admin_, "ivan").ok());
  EXPECT_TRUE(auth_->Login("ivan", otp, "x").ok());
  EXPECT_EQ(auth_->UnlockUser(admin_, "nobody").code(), Status::Code::kNotFound);
  EXPECT_EQ(auth_->EnableUser(admin_, "nobody").code(), Status::Code::kNotFound);
  EXPECT_EQ(PendingEventsWithAction("auth.user_unlocked"), 1u);
  EXPECT_EQ(PendingEventsWithAction("auth.user_enabled"), 1u);
}

TEST_F(AuthenticatorTest, SessionsNeedCsrfForChangesAndEndAtLogoutAndTimeouts) {
  Session s = LoggedInUser("dave", Role::kAdmin);
  EXPECT_TRUE(WithSession(s, false, "").ok());
  EXPECT_EQ(WithSession(s, true, "").status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(WithSession(s, true, RandomHex(32)).status().code(), Status::Code::kPermissionDenied);
  EXPECT_TRUE(WithSession(s, true, s.csrf_token).ok());

  // Idle timeout.
  now_ms_ += 60'000;
  EXPECT_EQ(WithSession(s, false, "").status().code(), Status::Code::kUnauthenticated);

  // Absolute timeout, even while active.
  Session t = *auth_->Login("dave", "a-new-password-1", "x");
  for (int i = 0; i < 5; ++i) {
    now_ms_ += 50'000;
    EXPECT_TRUE(WithSession(t, false, "").ok()) << i;
  }
  now_ms_ += 50'000;
  EXPECT_EQ(WithSession(t, false, "").status().code(), Status::Code::kUnauthenticated);

  // Logout invalidates server-side: the same id is refused afterwards.
  Session u = *auth_->Login("dave", "a-new-password-1", "x");
  Principal p = *WithSession(u, false, "");
  ASSERT_TRUE(auth_->Logout(p, "x").ok());
  EXPECT_EQ(WithSession(u, false, "").status().code(), Status::Code::kUnauthenticated);
}

TEST_F(AuthenticatorTest, AKeyGetsTheStricterOfItsOwnAndItsRolesLimitsWhichSurviveARestart) {
  NewKey spec{"mixed", "", Role::kUser, {}, 0};
  spec.limits.requests_per_minute = 100;
  spec.limits.tokens_per_day = 5000;
  CreatedKey key = *auth_->CreateKey(admin_, spec);
  KeyLimits role;
  role.requests_per_minute = 10;       // stricter than the key's 100
  role.tokens_per_day = 50'000;        // looser than the key's 5000
  role.tokens_per_minute = 700;        // the key has none
  ASSERT_TRUE(auth_->SetRoleLimits(admin_, Role::kUser, role).ok());
  EXPECT_EQ(PendingEventsWithAction("auth.role_limits_changed"), 1u);
  Result<Principal> p = WithKey(key.secret);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->limits.requests_per_minute, 10);
  EXPECT_EQ(p->limits.tokens_per_day, 5000);
  EXPECT_EQ(p->limits.tokens_per_minute, 700);
  EXPECT_EQ(p->limits.tokens_per_month, 0);
  // Another role is not limited by the user role's row.
  CreatedKey op = *auth_->CreateKey(admin_, NewKey{"op", "", Role::kOperator, {}, 0});
  EXPECT_EQ(WithKey(op.secret)->limits.requests_per_minute, 0);
  EXPECT_EQ(auth_->SetRoleLimits(admin_, Role::kUser, KeyLimits{-1, 0, 0, 0, 0}).code(), Status::Code::kInvalidArgument);

  AuthOptions options = auth_->options();
  std::array<uint8_t, 32> secret{};
  secret.fill(7);
  Authenticator restarted(store_, ServerSecret::FromBytes(secret), options);
  EXPECT_EQ(restarted.RoleLimits()[Role::kUser].tokens_per_minute, 700);
  EXPECT_EQ(restarted.RoleLimits()[Role::kAuditor].tokens_per_minute, 0);
  EXPECT_EQ(restarted.Authenticate(Credentials{key.secret, {}, {}, {}, false})->limits.requests_per_minute, 10);
}

TEST_F(AuthenticatorTest, RoleLimitEditsOfDifferentFieldsAtOnceKeepEveryField) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < std::size(kKeyLimitFields); ++i) {
    threads.emplace_back([&, i] {
      KeyChange change;
      change.limits[i] = static_cast<int64_t>(10 + i);
      EXPECT_TRUE(auth_->UpdateRoleLimits(admin_, Role::kUser, change).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  KeyLimits limits = auth_->RoleLimits()[Role::kUser];
  for (size_t i = 0; i < std::size(kKeyLimitFields); ++i) {
    EXPECT_EQ(limits.*kKeyLimitFields[i].member, static_cast<int64_t>(10 + i)) << kKeyLimitFields[i].name;
  }
  std::array<uint8_t, 32> secret{};
  secret.fill(7);
  Authenticator restarted(store_, ServerSecret::FromBytes(secret), auth_->options());
  EXPECT_EQ(restarted.RoleLimits()[Role::kUser].max_concurrent_streams, limits.max_concurrent_streams);
}

TEST_F(AuthenticatorTest, TokensPerMinuteBucketsSurviveARestart) {
  NewKey spec{"tpm", "", Role::kUser, {}, 0};
  spec.limits.tokens_per_minute = 60;
  CreatedKey key = *auth_->CreateKey(admin_, spec);
  Principal p = *WithKey(key.secret);
  int64_t retry = 0;
  ASSERT_TRUE((*auth_->BeginGeneration(p, &retry))->Finish(50, 20).ok());  // 10 over
  EXPECT_EQ(auth_->BeginGeneration(p, &retry).status().code(), Status::Code::kResourceExhausted);
  ASSERT_TRUE(auth_->FlushLastUsed().ok());
  std::array<uint8_t, 32> secret{};
  secret.fill(7);
  Authenticator restarted(store_, ServerSecret::FromBytes(secret), auth_->options());
  Result<std::unique_ptr<UsageMeter::Lease>> refused = restarted.BeginGeneration(p, &retry);
  ASSERT_EQ(refused.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("60 tokens per minute"), std::string::npos) << refused.status().message();
  EXPECT_EQ(retry, 11);  // 11 tokens back at one a second
  now_ms_ += 11'000;
  EXPECT_TRUE(restarted.BeginGeneration(p, &retry).ok());
}

TEST_F(AuthenticatorTest, ARotatedKeysOldSecretWorksThroughTheGracePeriodAndIsRefusedAfter) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"ci", "alice", Role::kUser, {}, 0});
  Result<CreatedKey> rotated = auth_->RotateKey(admin_, key.record.id, 60'000);
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_NE(rotated->secret, key.secret);
  EXPECT_EQ(rotated->record.id, key.record.id);
  EXPECT_EQ(rotated->record.previous_expires_ms, now_ms_ + 60'000);
  // Both secrets are the same key (same id, role, owner) until the grace period ends.
  EXPECT_EQ(WithKey(rotated->secret)->id, key.record.id);
  now_ms_ += 59'999;
  ASSERT_TRUE(WithKey(key.secret).ok());
  EXPECT_EQ(WithKey(key.secret)->id, key.record.id);
  now_ms_ += 1;
  Result<Principal> old = WithKey(key.secret);
  EXPECT_EQ(old.status().code(), Status::Code::kUnauthenticated);
  EXPECT_NE(old.status().message().find("rotated"), std::string::npos) << old.status().ToString();
  EXPECT_TRUE(WithKey(rotated->secret).ok());
  EXPECT_EQ(PendingEventsWithAction("auth.key_rotated"), 1u);

  // A second rotation drops the first secret at once and starts a new grace for the second.
  Result<CreatedKey> again = auth_->RotateKey(admin_, key.record.id, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(WithKey(rotated->secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(WithKey(key.secret).status().code(), Status::Code::kUnauthenticated);
  EXPECT_TRUE(WithKey(again->secret).ok());
}

TEST_F(AuthenticatorTest, RotationIsBoundedAndRefusedForUnknownRevokedAndExpiredKeys) {
  CreatedKey key = *auth_->CreateKey(admin_, NewKey{"ci", "", Role::kUser, {}, now_ms_ + 1000});
  EXPECT_EQ(auth_->RotateKey(admin_, key.record.id, -1).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(auth_->RotateKey(admin_, key.record.id, kMaxRotationGraceMs + 1).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(auth_->RotateKey(admin_, key.record.id, kMaxRotationGraceMs).ok());
  EXPECT_EQ(auth_->RotateKey(admin_, "key_0000", 0).status().code(), Status::Code::kNotFound);
  now_ms_ += 1000;
  EXPECT_EQ(auth_->RotateKey(admin_, key.record.id, 0).status().code(), Status::Code::kFailedPrecondition);
  CreatedKey revoked = *auth_->CreateKey(admin_, NewKey{"gone", "", Role::kUser, {}, 0});
  ASSERT_TRUE(auth_->RevokeKey(admin_, revoked.record.id).ok());
  EXPECT_EQ(auth_->RotateKey(admin_, revoked.record.id, 0).status().code(), Status::Code::kFailedPrecondition);
  // A revoked key's old secret is refused too, grace or not.
  CreatedKey graced = *auth_->CreateKey(admin_, NewKey{"graced", "", Role::kUser, {}, 0});
  ASSERT_TRUE(auth_->RotateKey(admin_, graced.record.id, 60'000).ok());
  ASSERT_TRUE(auth_->RevokeKey(admin_, graced.record.id).ok());
  EXPECT_EQ(WithKey(graced.secret).status().code(), Status::Code::kUnauthenticated);
}

TEST_F(AuthenticatorTest, APasswordResetIssuesAOneTimePasswordEndsSessionsAndUnlocks) {
  Session bob = LoggedInUser("bob", Role::kOperator);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(auth_->Login("bob", "wrong-password-1", "test").ok());
  ASSERT_EQ(UserStateOf(**store_->FindUser("bob"), now_ms_), UserState::kLocked);
  EXPECT_EQ(auth_->ResetPassword(Actor{"bob", "operator", "test"}, "bob").status().code(),
            Status::Code::kInvalidArgument);
  // Nor through a key bob owns: the rule is about whom the caller acts for, not how it signed in.
  const Actor bobs_key{"key_0123456789abcdef", "admin", "test", "bob"};
  EXPECT_EQ(auth_->ResetPassword(bobs_key, "bob").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(auth_->DisableUser(bobs_key, "bob").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(auth_->ResetPassword(admin_, "nobody").status().code(), Status::Code::kNotFound);
  Result<std::string> one_time = auth_->ResetPassword(admin_, "bob");
  ASSERT_TRUE(one_time.ok()) << one_time.status().ToString();
  EXPECT_EQ(WithSession(bob, false, "").status().code(), Status::Code::kUnauthenticated);
  EXPECT_FALSE(auth_->Login("bob", "a-new-password-1", "test").ok());
  Result<Session> again = auth_->Login("bob", *one_time, "test");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->principal.must_change_password);
  EXPECT_EQ(UserStateOf(**store_->FindUser("bob"), now_ms_), UserState::kPasswordChangeDue);
  EXPECT_EQ(PendingEventsWithAction("auth.password_reset"), 1u);
}

TEST_F(AuthenticatorTest, ListsSearchNameOwnerAndIdLiterallyAndPage) {
  for (const char* name : {"50% off", "500 off", "a_b", "axb", "back\\slash"}) {
    ASSERT_TRUE(auth_->CreateKey(admin_, NewKey{name, "alice", Role::kUser, {}, 0}).ok());
    now_ms_ += 1;  // the list is oldest first
  }
  auto names = [&](const std::string& search) {
    std::vector<std::string> out;
    Result<ListPage<KeyRecord>> page = auth_->ListKeys(ListQuery{search, kMaxListPage, 0});
    EXPECT_TRUE(page.ok());
    for (const KeyRecord& k : page->items) out.push_back(k.name);
    return out;
  };
  EXPECT_EQ(names("50%"), std::vector<std::string>{"50% off"});
  EXPECT_EQ(names("a_b"), std::vector<std::string>{"a_b"});
  EXPECT_EQ(names("K\\S"), std::vector<std::string>{"back\\slash"});
  EXPECT_EQ(names("OFF"), (std::vector<std::string>{"50% off", "500 off"}));
  EXPECT_EQ(names("ALIC").size(), 5u);  // the owner
  Result<std::vector<KeyRecord>> all = auth_->ListKeys();
  ASSERT_TRUE(all.ok());
  std::string id = all->at(2).id;
  EXPECT_EQ(names(id.substr(4, 8)), std::vector<std::string>{"a_b"});  // part of the id
  Result<ListPage<KeyRecord>> page = auth_->ListKeys(ListQuery{"", 2, 2});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 5);
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].name, "a_b");
  Result<ListPage<UserRecord>> users = auth_->ListUsers(ListQuery{"LIC", 10, 0});
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->items.size(), 1u);
  EXPECT_EQ(users->items[0].username, "alice");
  EXPECT_EQ(auth_->ListUsers(ListQuery{"%", 10, 0})->total, 0);
}

// A session in use is not cut by a short idle timeout: its last use was written at most every
// 15 s, so a 2 s timeout had cut a session polled every half second.
TEST_F(AuthenticatorTest, ASessionInUseOutlivesAShortIdleTimeout) {
  AuthOptions short_idle;
  short_idle.password = PasswordParams{1, 8192, 12};
  short_idle.session_idle_timeout_ms = 2'000;
  Restart(short_idle);
  Session polled = LoggedInUser("paula", Role::kUser);
  for (int i = 0; i < 20; ++i) {
    now_ms_ += 500;
    EXPECT_TRUE(WithSession(polled, false, "").ok()) << i;
  }
  now_ms_ += 2'000;
  EXPECT_EQ(WithSession(polled, false, "").status().code(), Status::Code::kUnauthenticated);
}

// A session that had timed out was judged again by the settings of its next use: raising the
// idle or the absolute timeout and restarting made it valid again. Its row outlived it too.
TEST_F(AuthenticatorTest, RaisingATimeoutDoesNotReviveASessionThatHadEnded) {
  AuthOptions options = auth_->options();  // idle 60 s, absolute 300 s
  Session left = LoggedInUser("erin", Role::kUser);
  Session kept = *auth_->Login("erin", "a-new-password-1", "x");
  for (int i = 0; i < 5; ++i) {  // `kept` in use up to its absolute end, `left` idle past its own
    now_ms_ += 50'000;
    EXPECT_TRUE(WithSession(kept, false, "").ok()) << i;
  }
  now_ms_ += 51'000;
  AuthOptions longer = options;
  longer.session_idle_timeout_ms = 3'600'000;
  longer.session_absolute_timeout_ms = 7'200'000;
  Restart(longer);
  EXPECT_EQ(WithSession(left, false, "").status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(WithSession(kept, false, "").status().code(), Status::Code::kUnauthenticated);

  // A lowered timeout still applies at once; a session made now has the longer ones.
  Session fresh = *auth_->Login("erin", "a-new-password-1", "x");
  now_ms_ += 120'000;
  EXPECT_TRUE(WithSession(fresh, false, "").ok());
  Restart(options);
  now_ms_ += 61'000;
  EXPECT_EQ(WithSession(fresh, false, "").status().code(), Status::Code::kUnauthenticated);

  // A sign-in removes the rows of sessions past their own deadlines.
  Restart(longer);
  Session last = *auth_->Login("erin", "a-new-password-1", "x");
  int64_t rows = -1;
  ASSERT_TRUE(db_->Read([&](sqlite3* db) -> Status {
                   store::SqlStatement count(db, "SELECT COUNT(*) FROM auth_sessions");
                   KIMI_ASSIGN_OR_RETURN(bool row, count.Step());
                   if (row) rows = count.Int(0);
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(rows, 1) << "only the session just made";
  EXPECT_TRUE(WithSession(last, false, "").ok());
}

// A FIFO planted in the secret's place in the data directory: the start waited in open() for a
// writer. The alarm ends a regression.
TEST_F(AuthenticatorTest, ServerSecretRefusesAFifoInItsPlaceWithoutWaiting) {
  std::string dir = test_store_.root() + "/secret";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/auth-secret.key").c_str(), 0600), 0);
  ::alarm(60);
  const Status fifo = ServerSecret::LoadOrCreate(dir, 0).status();
  ::alarm(0);
  EXPECT_EQ(fifo.code(), Status::Code::kInvalidArgument) << fifo.ToString();
}

TEST_F(AuthenticatorTest, ServerSecretIsCreatedOnceWithMode0600) {
  std::string dir = test_store_.root() + "/secret";
  Result<ServerSecret> a = ServerSecret::LoadOrCreate(dir, 0);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<ServerSecret> b = ServerSecret::LoadOrCreate(dir, 3);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(DigestEquals(a->KeyedHash("x"), b->KeyedHash("x")));
  auto perms = std::filesystem::status(dir + "/auth-secret.key").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(dir + "/auth-secret.key", std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  EXPECT_EQ(ServerSecret::LoadOrCreate(dir, 0).status().code(), Status::Code::kFailedPrecondition);
}

// A deleted secret is not silently replaced while keys or sessions hashed with the old one
// exist: every one of them would stop working, with nothing in the log.
TEST_F(AuthenticatorTest, AMissingServerSecretIsNotReplacedWhileCredentialsDependOnIt) {
  ASSERT_TRUE(auth_->CreateKey(admin_, NewKey{"k", "", Role::kUser, {}, 0}).ok());
  Result<int64_t> credentials = store_->HashedCredentials();
  ASSERT_TRUE(credentials.ok());
  EXPECT_EQ(*credentials, 1);
  const std::string dir = test_store_.root() + "/lost-secret";
  Result<ServerSecret> refused = ServerSecret::LoadOrCreate(dir, *credentials);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("restore it from the backup"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/auth-secret.key"));
}

}  // namespace
}  // namespace kimi::auth
