#include "audit/log_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::SampleRecord;
using testing::TempDir;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Number of fields of one CSV line (RFC 4180 quoting, no embedded newlines in these tests).
size_t CsvFieldCount(const std::string& line) {
  size_t fields = 1;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++fields;
  }
  return fields;
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildLog(dir_.path(), 12, {4, 8});  // heads at 4, 8, 12
    AuditStoreOptions o;
    o.read_only = true;
    store_ = std::move(AuditStore::Open(dir_.File("audit.db"), o)).value();
  }
  TempDir dir_;
  std::unique_ptr<AuditStore> store_;
};

TEST_F(ExportTest, JsonlRecordsInRangeWithCoveringHeads) {
  ExportOptions o;
  o.records.since_ms = SampleRecord(5).time_ms;
  o.records.until_ms = SampleRecord(7).time_ms;  // exclusive: records 5 and 6
  std::ostringstream out;
  Result<ExportSummary> s = ExportAuditLog(*store_, o, out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->records, 2u);
  EXPECT_EQ(s->heads, 1u);  // the head at 8 covers both
  EXPECT_TRUE(s->fully_covered);
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["type"], "record");
  EXPECT_EQ(first["seq"], 5);
  EXPECT_EQ(first["content"]["prompt"], "prompt 5");
  EXPECT_EQ(first["leaf_hash"].get<std::string>().size(), 64u);
  const auto head = nlohmann::json::parse(lines[2]);
  EXPECT_EQ(head["type"], "signed_head");
  EXPECT_EQ(head["tree_size"], 8);
}

TEST_F(ExportTest, HeadsFromFirstCoveringToLastCovering) {
  ExportOptions o;
  o.records.since_ms = SampleRecord(2).time_ms;
  std::ostringstream out;
  Result<ExportSummary> s = ExportAuditLog(*store_, o, out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->records, 10u);
  EXPECT_EQ(s->heads, 3u);  // 4, 8 and 12
}

TEST_F(ExportTest, CsvHasOneColumnCountForEveryLine) {
  std::ostringstream out;
  ExportOptions o;
  o.format = ExportFormat::kCsv;
  ASSERT_TRUE(ExportAuditLog(*store_, o, out).ok());
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 1u + 12u + 3u);  // header, records, heads at 4, 8 and 12
  const size_t columns = CsvFieldCount(lines[0]);
  for (const std::string& line : lines) EXPECT_EQ(CsvFieldCount(line), columns) << line;
  EXPECT_EQ(lines.back().rfind("signed_head,", 0), 0u);
}

TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
}

// OWASP's CSV injection rule: a cell a spreadsheet would evaluate becomes quoted text.
TEST(Csv, FormulaCellsBecomeText) {
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x.invalid/\",\"x\")"),
            "\"'=HYPERLINK(\"\"http://x.invalid/\"\",\"\"x\"\")\"");
  EXPECT_EQ(CsvField("+1"), "\"'+1\"");
  EXPECT_EQ(CsvField("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(CsvField("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(CsvField("\t=1"), "\"'\t=1\"");
  EXPECT_EQ(CsvField("\r=1"), "\"'\r=1\"");
  EXPECT_EQ(CsvField("a=b"), "a=b");  // only where a cell starts
}

// A reader whose list separator is ';' splits a line at every ';', quoted or not: the text after
// each one starts a cell, so a formula there becomes text too (a client's X-Request-Id of
// x;=cmd|' /C calc'!A0 was written unchanged).
TEST(Csv, FormulaCellsAfterASemicolonBecomeText) {
  EXPECT_EQ(CsvField("x;=cmd|' /C calc'!A0"), "\"x;'=cmd|' /C calc'!A0\"");
  EXPECT_EQ(CsvField("name a;+1;-2; @x"), "\"name a;'+1;'-2; @x\"");
  EXPECT_EQ(CsvField("=a;=b"), "\"'=a;'=b\"");
  EXPECT_EQ(CsvField("a;b"), "\"a;b\"");
  EXPECT_EQ(CsvField(";"), "\";\"");
}

// Cells of one CSV text (RFC 4180), row by row.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

// The pen test's login: a user name that a spreadsheet would run lands in several columns
// (actor, target, detail, the client's request id); none of them starts a formula.
TEST(Csv, ExportedRecordsStartNoFormula) {
  TempDir dir;
  {
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(testing::TestSinkOptions(dir.path()))).value();
    AuditRecord r = SampleRecord(0);
    r.action = "auth.login_failed";
    r.actor = "=HYPERLINK(\"http://x.invalid/\",\"x\")";
    r.target = "+cmd|' /C calc'!A0";
    r.detail = "-2+3";
    r.model = "@SUM(1)";
    r.client_request_id = "\t=1";
    ASSERT_TRUE(sink->Record(r).WaitCommitted().ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  AuditStoreOptions o;
  o.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), o)).value();
  std::ostringstream out;
  ExportOptions e;
  e.format = ExportFormat::kCsv;
  ASSERT_TRUE(ExportAuditLog(*store, e, out).ok());
  const std::vector<std::vector<std::string>> rows = ParseCsv(out.str());
  ASSERT_GE(rows.size(), 2u);
  const std::vector<std::string>& header = rows[0];
  for (const std::vector<std::string>& row : rows) {
    ASSERT_EQ(row.size(), header.size()) << out.str();
    for (const std::string& cell : row) {
      ASSERT_TRUE(cell.empty() || std::string_view("=+-@\t\r").find(cell[0]) == std::string_view::npos)
          << "formula cell: " << cell;
    }
  }
  const auto column = [&](std::string_view name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  EXPECT_EQ(rows[1][column("actor")], "'=HYPERLINK(\"http://x.invalid/\",\"x\")");
  // The tab was escaped when the record was made (audit_text.h), so the cell is plain text.
  EXPECT_EQ(rows[1][column("client_request_id")], "\\u0009=1");
}

}  // namespace
}  // namespace kimi::audit
