// The export bundle of a log of thousands of records, streamed: it verifies in-process and
// with the standalone verifier, and it is written while it is read (by design: one record
// and one path at a time, stored_tree_prover.h), which the failing-writer test shows.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <streambuf>

#include "audit/export_verifier.h"
#include "audit/log_export.h"
#include "audit/proof_format.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::SampleRecord;
using testing::TempDir;

constexpr int kRecords = 3001;  // not a power of two; heads at 1000, 2048 and 3001

// A stream buffer that accepts `capacity` bytes, then fails, counting what it was offered.
class FailingAfter : public std::streambuf {
 public:
  explicit FailingAfter(size_t capacity) : capacity_(capacity) {}
  size_t offered() const { return offered_; }

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    offered_ += static_cast<size_t>(n);
    return offered_ <= capacity_ ? n : 0;
  }
  int_type overflow(int_type c) override {
    return xsputn(nullptr, 1) == 1 ? traits_type::not_eof(c) : traits_type::eof();
  }

 private:
  size_t capacity_;
  size_t offered_ = 0;
};

class ExportStreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    key_ = BuildLog(dir_->path(), kRecords, {1000, 2048});
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    AuditStoreOptions o;
    o.read_only = true;
    store_ = std::move(AuditStore::Open(dir_->File("audit.db"), o)).value();
  }
  std::string Bundle(int64_t since, int64_t until, Result<ExportSummary>* summary) {
    ExportOptions o;
    o.records.since_ms = since;
    o.records.until_ms = until;
    o.with_proofs = true;
    std::ostringstream out;
    *summary = ExportAuditLog(*store_, o, out);
    return out.str();
  }
  static TempDir* dir_;
  static PublicKey key_;
  std::unique_ptr<AuditStore> store_;
};

TempDir* ExportStreamTest::dir_ = nullptr;
PublicKey ExportStreamTest::key_;

TEST_F(ExportStreamTest, ThousandsOfRecordsVerifyInProcessAndStandalone) {
  Result<ExportSummary> summary = Status::OK();
  const std::string bundle = Bundle(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &summary);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->records, static_cast<uint64_t>(kRecords));
  std::istringstream in(bundle);
  Result<BundleReport> report = VerifyExportBundle(in, key_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << (report->problems.empty() ? "" : report->problems[0]);
  EXPECT_EQ(report->records, static_cast<uint64_t>(kRecords));

  // A middle range is proven against the head that covers its last record (2048).
  const std::string middle = Bundle(SampleRecord(1500).time_ms, SampleRecord(2000).time_ms, &summary);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->records, 500u);
  EXPECT_NE(middle.find("\"tree_size\":2048"), std::string::npos);
  std::istringstream middle_in(middle);
  report = VerifyExportBundle(middle_in, key_);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());

  if (std::getenv("KIMI_BUILD_DIR") == nullptr) GTEST_SKIP() << "KIMI_BUILD_DIR is not set (run through ctest)";
  TempDir out;
  std::ofstream(out.File("key.json")) << PublicKeyToJson(key_).dump();
  std::ofstream(out.File("bundle.jsonl")) << bundle;
  const std::string args = "bundle --public-key " + out.File("key.json") + " --bundle ";
  EXPECT_EQ(testing::RunStandaloneVerifier(args + out.File("bundle.jsonl")), 0);
  // One hex digit of one path changed: not verified.
  std::string altered = bundle;
  const size_t path = altered.find("\"path\":[\"", altered.size() / 2);
  ASSERT_NE(path, std::string::npos);
  char& digit = altered[path + 9];
  digit = digit == '0' ? '1' : '0';
  std::ofstream(out.File("altered.jsonl")) << altered;
  EXPECT_EQ(testing::RunStandaloneVerifier(args + out.File("altered.jsonl")), 1);
}

TEST_F(ExportStreamTest, WritesAsItReadsAndStopsAtTheFirstFailedWrite) {
  Result<ExportSummary> summary = Status::OK();
  const size_t whole =
      Bundle(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &summary).size();
  ASSERT_TRUE(summary.ok());
  // A reader that goes away after 8 KiB: the export has offered about that much, one record
  // line more at most, not the bundle it would have built in memory first.
  for (bool with_proofs : {true, false}) {
    FailingAfter sink(8 * 1024);
    std::ostream out(&sink);
    ExportOptions o;
    o.with_proofs = with_proofs;
    Result<ExportSummary> cut = ExportAuditLog(*store_, o, out);
    EXPECT_EQ(cut.status().code(), Status::Code::kIOError) << with_proofs;
    EXPECT_LT(sink.offered(), 8 * 1024 + 4096u) << with_proofs;
    EXPECT_GT(whole, 100 * sink.offered());
  }
}

}  // namespace
}  // namespace kimi::audit
