#include "auth/auth_migrations.h"

#include <stdlib.h>

#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "auth/auth_store.h"

namespace kimi::auth {
namespace {

Status Exec(store::Store& db, const char* sql) {
  return db.Write([&](sqlite3* conn) { return store::Exec(conn, sql); });
}

// Keys made before owners were checked keep working: an owner that names no user becomes the
// system principal, each change an auth event; a user's keys stay the user's.
TEST(AuthMigrationsTest, FreeTextOwnersBecomeTheSystemPrincipalWithAnEvent) {
  std::string dir = (std::filesystem::temp_directory_path() / "kimi-auth-migration-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    Result<std::unique_ptr<store::Store>> db = store::Store::Open(dir + "/data");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    std::vector<store::Migration> before;
    for (const store::Migration& m : kAuthMigrations) {
      if (!(m.component == "auth" && m.version >= 5)) before.push_back(m);
    }
    ASSERT_TRUE((*db)->Migrate(before).ok());
    ASSERT_TRUE(Exec(**db,
                     "INSERT INTO auth_users(username, password_hash, role, must_change_password, created_ms) "
                     "VALUES('alice', 'x', 'user', 0, 1);"
                     "INSERT INTO auth_keys(id, key_hash, name, owner, role, models, created_ms, expires_ms) VALUES"
                     "('key_a', x'01', 'a', 'kimictl:root', 'admin', '[]', 1, 0),"
                     "('key_b', x'02', 'b', 'alice', 'user', '[]', 1, 0),"
                     "('key_c', x'03', 'c', 'installer', 'user', '[]', 1, 0);")
                    .ok());
    ASSERT_TRUE((*db)->Migrate(kAuthMigrations).ok());
    AuthStore store(db->get());
    Result<std::vector<KeyRecord>> keys = store.ListKeys();
    ASSERT_TRUE(keys.ok());
    ASSERT_EQ(keys->size(), 3u);
    EXPECT_EQ((*keys)[0].owner, "system");
    EXPECT_EQ((*keys)[1].owner, "alice");
    EXPECT_TRUE((*keys)[1].owner_enabled);
    EXPECT_EQ((*keys)[2].owner, "installer");
    Result<std::vector<AuthEvent>> events = store.PendingEvents(10);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ((*events)[0].action, "auth.key_owner_changed");
    EXPECT_EQ((*events)[0].target, "key_a");
    EXPECT_EQ((*events)[0].detail, "owner 'kimictl:root' -> system: not a user name");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kimi::auth
