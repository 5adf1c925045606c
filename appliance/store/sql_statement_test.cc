#include "store/sql_statement.h"

#include <sqlite3.h>

#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kimi::store {
namespace {

class SqlStatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    ASSERT_TRUE(Exec(db_, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, data BLOB)").ok());
  }
  void TearDown() override { EXPECT_EQ(sqlite3_close(db_), SQLITE_OK) << "a statement was left unfinalised"; }

  sqlite3* db_ = nullptr;
};

TEST_F(SqlStatementTest, BindsEachTypeAndReadsItBack) {
  const std::string with_nul("a\0b", 3);
  const std::array<uint8_t, 3> bytes = {0, 255, 7};
  SqlStatement insert(db_, "INSERT INTO t(id, name, score, data) VALUES(?1, ?2, ?3, ?4)");
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  insert.Bind(1, int64_t{1} << 40).Bind(2, with_nul).Bind(3, 2.5).BindBlob(4, bytes);
  ASSERT_TRUE(insert.Run().ok()) << insert.status().ToString();
  EXPECT_EQ(insert.Changes(), 1);

  SqlStatement select(db_, "SELECT id, name, score, data, NULL FROM t");
  EXPECT_EQ(select.ColumnCount(), 5);
  Result<bool> row = select.Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ(select.Int(0), int64_t{1} << 40);
  EXPECT_EQ(select.Text(1), with_nul);
  EXPECT_EQ(select.Double(2), 2.5);
  EXPECT_EQ(select.Blob(3), std::string("\0\xff\x07", 3));
  EXPECT_EQ(select.Type(0), SqlType::kInteger);
  EXPECT_EQ(select.Type(1), SqlType::kText);
  EXPECT_EQ(select.Type(2), SqlType::kFloat);
  EXPECT_EQ(select.Type(3), SqlType::kBlob);
  EXPECT_EQ(select.Type(4), SqlType::kNull);
  EXPECT_EQ(select.Text(4), "");
  row = select.Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST_F(SqlStatementTest, ResetRunsTheStatementAgainWithNewValues) {
  SqlStatement insert(db_, "INSERT INTO t(id, name) VALUES(?1, ?2)");
  for (int id = 1; id <= 3; ++id) {
    insert.Bind(1, id).Bind(2, "n" + std::to_string(id));
    ASSERT_TRUE(insert.Run().ok()) << insert.status().ToString();
    insert.Reset();
  }
  SqlStatement select(db_, "SELECT id, name FROM t ORDER BY id");
  std::vector<std::string> names;
  ASSERT_TRUE(select.ForEachRow([&] { names.push_back(select.Text(1)); }).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"n1", "n2", "n3"}));

  // Reset clears the bindings: an unbound parameter is NULL, which the column refuses.
  insert.Bind(1, 4);
  Status refused = insert.Run();
  EXPECT_EQ(refused.code(), Status::Code::kIOError);
  EXPECT_NE(refused.message().find("NOT NULL"), std::string::npos) << refused.message();
  // ... and a reset clears that error: the statement runs again.
  insert.Reset();
  EXPECT_TRUE(insert.Bind(1, 4).Bind(2, "n4").Run().ok()) << insert.status().ToString();
}

TEST_F(SqlStatementTest, ForEachRowStopsAtTheVisitorsError) {
  ASSERT_TRUE(Exec(db_, "INSERT INTO t(id, name) VALUES(1, 'a'), (2, 'b'), (3, 'c')").ok());
  SqlStatement select(db_, "SELECT id FROM t ORDER BY id");
  int seen = 0;
  Status s = select.ForEachRow([&]() -> Status {
    ++seen;
    return select.Int(0) == 2 ? Status::Corruption("row 2") : Status::OK();
  });
  EXPECT_EQ(s, Status::Corruption("row 2"));
  EXPECT_EQ(seen, 2);
}

TEST_F(SqlStatementTest, AFailedPrepareIsKeptAndNamesTheSql) {
  SqlStatement bad(db_, "SELECT id FROM missing_table");
  EXPECT_FALSE(bad.ok());
  bad.Bind(1, 5).Bind(2, "ignored");  // no effect, no crash
  Result<bool> row = bad.Step();
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.status().code(), Status::Code::kIOError);
  EXPECT_NE(row.status().message().find("no such table: missing_table"), std::string::npos) << row.status().message();
  EXPECT_NE(row.status().message().find("\"SELECT id FROM missing_table\""), std::string::npos);
  EXPECT_EQ(bad.Run(), row.status());
}

TEST_F(SqlStatementTest, ABindOutOfRangeFailsTheNextStep) {
  SqlStatement insert(db_, "INSERT INTO t(id, name) VALUES(?1, ?2)");
  insert.Bind(1, 1).Bind(3, "no such parameter").Bind(2, "x");
  Status s = insert.Run();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("INSERT INTO t(id, name)"), std::string::npos) << s.message();
  SqlStatement count(db_, "SELECT count(*) FROM t");
  ASSERT_TRUE(*count.Step());
  EXPECT_EQ(count.Int(0), 0);  // the failed statement never ran
}

TEST_F(SqlStatementTest, CodesByCauseClassifyTheFailure) {
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open("file::memory:?mode=ro", &other), SQLITE_OK);
  EXPECT_EQ(SqlError(other, SQLITE_FULL, "INSERT", SqlErrorCodes::kByCause).code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(SqlError(other, SQLITE_BUSY, "INSERT", SqlErrorCodes::kByCause).code(), Status::Code::kUnavailable);
  EXPECT_EQ(SqlError(other, SQLITE_CORRUPT, "INSERT", SqlErrorCodes::kByCause).code(), Status::Code::kCorruption);
  EXPECT_EQ(SqlError(other, SQLITE_READONLY, "INSERT", SqlErrorCodes::kByCause).code(),
            Status::Code::kPermissionDenied);
  EXPECT_EQ(SqlError(other, SQLITE_FULL, "INSERT", SqlErrorCodes::kIOError).code(), Status::Code::kIOError);
  EXPECT_EQ(sqlite3_close(other), SQLITE_OK);

  // A statement's own failure: a UNIQUE violation is a constraint, not one of the causes above.
  ASSERT_TRUE(Exec(db_, "INSERT INTO t(id, name) VALUES(1, 'a')").ok());
  SqlStatement dup(db_, "INSERT INTO t(id, name) VALUES(1, 'b')", SqlErrorCodes::kByCause);
  Status s = dup.Run();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("UNIQUE constraint failed: t.id"), std::string::npos) << s.message();
}

TEST_F(SqlStatementTest, ALongStatementIsCutShortInMessages) {
  std::string sql = "SELECT id FROM missing_table WHERE " + std::string(500, ' ') + "1";
  Status s = SqlStatement(db_, sql).status();
  EXPECT_NE(s.message().find("...\""), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 300u);
}

TEST_F(SqlStatementTest, PrepareOnceKeepsOneStatementAndRetriesAFailedPrepare) {
  SqlStatement kept;
  EXPECT_FALSE(kept.ok());
  // A failed prepare leaves it unprepared; the next call prepares again.
  EXPECT_FALSE(kept.PrepareOnce(db_, "INSERT INTO later(id) VALUES(?1)").ok());
  ASSERT_TRUE(Exec(db_, "CREATE TABLE later(id INTEGER)").ok());
  for (int id = 1; id <= 2; ++id) {
    ASSERT_TRUE(kept.PrepareOnce(db_, "INSERT INTO later(id) VALUES(?1)").ok());
    ASSERT_TRUE(kept.Bind(1, id).Run().ok()) << kept.status().ToString();
  }
  // Prepared once: other SQL given later is not prepared in its place.
  ASSERT_TRUE(kept.PrepareOnce(db_, "INSERT INTO t(id, name) VALUES(?1, 'x')").ok());
  ASSERT_TRUE(kept.Bind(1, 3).Run().ok());
  SqlStatement count(db_, "SELECT count(*), sum(id) FROM later");
  ASSERT_TRUE(*count.Step());
  EXPECT_EQ(count.Int(0), 3);
  EXPECT_EQ(count.Int(1), 6);
}

TEST_F(SqlStatementTest, AMovedStatementIsFinalisedOnce) {
  SqlStatement a(db_, "SELECT 7");
  SqlStatement b(std::move(a));
  EXPECT_FALSE(a.ok());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  ASSERT_TRUE(*b.Step());
  EXPECT_EQ(b.Int(0), 7);
  SqlStatement c;
  c = std::move(b);
  c.Reset();
  ASSERT_TRUE(*c.Step());
  EXPECT_EQ(c.Int(0), 7);
  // TearDown's close fails if any of a, b, c left its statement behind.
}

// The key and user lists' search and the audit search's `q` both go through it: user text
// never acts as a wildcard.
TEST(LikeContainsTest, EscapesTheWildcardsAndTheEscape) {
  EXPECT_EQ(LikeContains(""), "%%");
  EXPECT_EQ(LikeContains("abc"), "%abc%");
  EXPECT_EQ(LikeContains("50%_a\\"), "%50\\%\\_a\\\\%");
  EXPECT_EQ(LikeContains("100%_x\\"), "%100\\%\\_x\\\\%");
  EXPECT_EQ(LikeContains("'; DROP TABLE audit_records; --"), "%'; DROP TABLE audit\\_records; --%");
}

}  // namespace
}  // namespace kimi::store
