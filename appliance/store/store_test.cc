#include "store/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace kimi::store {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-store-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/data";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  Result<int64_t> CountRows(Store& s, const std::string& table) {
    int64_t n = -1;
    Status st = s.Read([&](sqlite3* db) {
      SqlStatement count(db, "SELECT count(*) FROM " + table);
      return count.ForEachRow([&] { n = count.Int(0); });
    });
    if (!st.ok()) return st;
    return n;
  }

  std::string root_;
  std::string dir_;
};

const Migration kTwo[] = {
    {"things", 1, "create things", "CREATE TABLE things(id INTEGER PRIMARY KEY, name TEXT NOT NULL)"},
    {"parts", 1, "create parts",
     "CREATE TABLE parts(id INTEGER PRIMARY KEY, thing INTEGER NOT NULL REFERENCES things(id))"},
    {"things", 2, "add colour", "ALTER TABLE things ADD COLUMN colour TEXT"},
};

TEST_F(StoreTest, OpenCreatesDirectoryAndDatabaseWithSettings) {
  Result<std::unique_ptr<Store>> s = Store::Open(dir_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/appliance.db"));
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir_ + "/appliance.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string journal;
  int fk = -1;
  ASSERT_TRUE((*s)->Read([&](sqlite3* db) {
    SqlStatement mode(db, "PRAGMA journal_mode");
    KIMI_RETURN_IF_ERROR(mode.ForEachRow([&] { journal = mode.Text(0); }));
    SqlStatement keys(db, "PRAGMA foreign_keys");
    return keys.ForEachRow([&] { fk = static_cast<int>(keys.Int(0)); });
  }).ok());
  EXPECT_EQ(journal, "wal");
  EXPECT_EQ(fk, 1);
  EXPECT_TRUE((*s)->QuickCheck().ok());
}

// A removed or emptied database would otherwise come back empty at the next open: every key,
// user and policy version gone without a word. Its marker makes that an error.
TEST_F(StoreTest, ADatabaseRemovedOrEmptiedAfterItsCreationIsRefused) {
  { ASSERT_TRUE(Store::Open(dir_).ok()); }
  const std::string db = dir_ + "/appliance.db";
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/" + std::string(kDatabaseMarkerFile)));
  struct stat st {};
  ASSERT_EQ(stat(db.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 0);
  { ASSERT_TRUE(Store::Open(dir_).ok()); }  // reopening an existing database is fine

  ASSERT_EQ(truncate(db.c_str(), 0), 0);
  Result<std::unique_ptr<Store>> emptied = Store::Open(dir_);
  ASSERT_FALSE(emptied.ok());
  EXPECT_EQ(emptied.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(emptied.status().message().find("is missing or empty"), std::string::npos) << emptied.status().ToString();

  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  Result<std::unique_ptr<Store>> removed = Store::Open(dir_);
  ASSERT_FALSE(removed.ok());
  EXPECT_FALSE(std::filesystem::exists(db));  // nothing created in its place

  // Starting anew on purpose: remove the marker first.
  std::filesystem::remove(dir_ + "/" + std::string(kDatabaseMarkerFile));
  EXPECT_TRUE(Store::Open(dir_).ok());
}

TEST_F(StoreTest, MigrationsApplyOnceInOrder) {
  auto s = Store::Open(dir_);
  ASSERT_TRUE(s.ok());
  Result<int> applied = (*s)->Migrate(kTwo);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(*applied, 3);
  applied = (*s)->Migrate(kTwo);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, 0);
  EXPECT_EQ(*CountRows(**s, "schema_migrations"), 3);
  // The tables exist and foreign keys are enforced.
  EXPECT_TRUE((*s)->Write([](sqlite3* db) { return Exec(db, "INSERT INTO things(id, name, colour) VALUES(1, 'a', 'red')"); }).ok());
  Status bad = (*s)->Write([](sqlite3* db) { return Exec(db, "INSERT INTO parts(thing) VALUES(42)"); });
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("FOREIGN KEY"), std::string::npos) << bad.message();
}

TEST_F(StoreTest, MigrationsSurviveReopenAndNewOnesAreAdded) {
  {
    auto s = Store::Open(dir_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->Migrate(std::span<const Migration>(kTwo, 2)).ok());
    EXPECT_TRUE((*s)->Close().ok());
    EXPECT_EQ((*s)->Migrate(kTwo).status().code(), Status::Code::kFailedPrecondition);
  }
  auto s = Store::Open(dir_);
  ASSERT_TRUE(s.ok());
  Result<int> applied = (*s)->Migrate(kTwo);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, 1);
}

TEST_F(StoreTest, RefusesUnknownOrChangedMigrations) {
  auto s = Store::Open(dir_);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Migrate(kTwo).ok());
  Result<int> older = (*s)->Migrate(std::span<const Migration>(kTwo, 2));
  ASSERT_FALSE(older.ok());
  EXPECT_NE(older.status().message().find("things/2"), std::string::npos) << older.status().message();
  const Migration edited[] = {kTwo[0], kTwo[1], {"things", 2, "add colour", "ALTER TABLE things ADD COLUMN hue TEXT"}};
  Result<int> changed = (*s)->Migrate(edited);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("differs"), std::string::npos);
}

TEST_F(StoreTest, RejectsInconsistentListsAndRollsBackFailures) {
  auto s = Store::Open(dir_);
  ASSERT_TRUE(s.ok());
  const Migration gap[] = {{"a", 1, "one", "CREATE TABLE a1(x)"}, {"a", 3, "three", "CREATE TABLE a3(x)"}};
  EXPECT_EQ((*s)->Migrate(gap).status().code(), Status::Code::kInvalidArgument);
  const Migration broken[] = {{"b", 1, "ok", "CREATE TABLE b1(x)"},
                              {"b", 2, "half", "CREATE TABLE b2(x); THIS IS NOT SQL"}};
  Result<int> r = (*s)->Migrate(broken);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("migration b/2 (half)"), std::string::npos) << r.status().message();
  // b/1 committed; b/2 rolled back entirely (b2 does not exist).
  EXPECT_EQ(*CountRows(**s, "schema_migrations"), 1);
  EXPECT_FALSE(CountRows(**s, "b2").ok());
}

TEST_F(StoreTest, OpenFailsWhenDataDirIsAFile) {
  std::filesystem::create_directories(root_);
  std::string file = root_ + "/file";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  auto s = Store::Open(file);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace kimi::store
