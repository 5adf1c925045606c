#include "audit/log_export.h"

#include <gtest/gtest.h>

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
  o.since_ms = SampleRecord(5).time_ms;
  o.until_ms = SampleRecord(7).time_ms;  // exclusive: records 5 and 6
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
  o.since_ms = SampleRecord(2).time_ms;
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

}  // namespace
}  // namespace kimi::audit
