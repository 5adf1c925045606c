#include "migrations/all_migrations.h"

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "auth/auth_migrations.h"
#include "models/model_migrations.h"
#include "policy/policy_migrations.h"

namespace kimi::store {
namespace {

TEST(AllMigrationsTest, TheDaemonsListIsConsistent) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-store-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  auto s = Store::Open(tmpl);
  ASSERT_TRUE(s.ok());
  Result<int> r = (*s)->Migrate(AllMigrations());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  (*s)->Close();
  std::filesystem::remove_all(tmpl);
}

// The order is part of the schema: a database records the migrations in the order applied.
TEST(AllMigrationsTest, AuthThenModelsThenPolicyEachInItsOwnOrder) {
  std::vector<const Migration*> expected;
  for (const Migration& m : auth::kAuthMigrations) expected.push_back(&m);
  for (const Migration& m : models::kModelMigrations) expected.push_back(&m);
  for (const Migration& m : policy::kPolicyMigrations) expected.push_back(&m);
  std::span<const Migration> all = AllMigrations();
  ASSERT_EQ(all.size(), expected.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].component, expected[i]->component) << i;
    EXPECT_EQ(all[i].version, expected[i]->version) << i;
    EXPECT_EQ(all[i].sql, expected[i]->sql) << i;
  }
}

}  // namespace
}  // namespace kimi::store
