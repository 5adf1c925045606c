#include "audit/export_verifier.h"

#include <gtest/gtest.h>

#include <sstream>

#include "audit/audit_key.h"
#include "audit/audit_sink.h"
#include "audit/merkle.h"
#include "audit/log_export.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::SampleRecord;
using testing::TempDir;

std::vector<nlohmann::json> Lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string Join(const std::vector<nlohmann::json>& lines) {
  std::string out;
  for (const auto& j : lines) out += j.dump() + "\n";
  return out;
}

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = BuildLog(dir_.path(), 12, {4, 8});  // heads at 4, 8, 12
    AuditStoreOptions o;
    o.read_only = true;
    store_ = std::move(AuditStore::Open(dir_.File("audit.db"), o)).value();
  }
  std::string Export(int64_t since, int64_t until) {
    ExportOptions o;
    o.records.since_ms = since;
    o.records.until_ms = until;
    o.with_proofs = true;
    std::ostringstream out;
    Result<ExportSummary> s = ExportAuditLog(*store_, o, out);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return out.str();
  }
  Result<BundleReport> Check(const std::string& bundle, const PublicKey* key = nullptr) {
    std::istringstream in(bundle);
    return VerifyExportBundle(in, key ? *key : key_);
  }
  TempDir dir_;
  PublicKey key_;
  std::unique_ptr<AuditStore> store_;
};

TEST_F(BundleTest, ARangeVerifiesAgainstTheHeadThatCoversIt) {
  const std::string bundle = Export(SampleRecord(5).time_ms, SampleRecord(7).time_ms);  // records 5 and 6
  const std::vector<nlohmann::json> lines = Lines(bundle);
  ASSERT_EQ(lines.size(), 4u);  // header, 2 records, the head at 8
  EXPECT_EQ(lines[0]["type"], "export");
  EXPECT_EQ(lines[1]["inclusion"]["tree_size"], 8);
  EXPECT_EQ(lines[3]["tree_size"], 8);
  Result<BundleReport> r = Check(bundle);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->problems.front();
  EXPECT_EQ(r->records, 2u);
  EXPECT_EQ(r->heads, 1u);
}

TEST_F(BundleTest, AnEditedRecordIsReportedWithItsSequenceNumber) {
  std::vector<nlohmann::json> lines = Lines(Export(SampleRecord(0).time_ms, SampleRecord(12).time_ms));
  lines[4]["actor"] = "someone else";  // record 3
  Result<BundleReport> r = Check(Join(lines));
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->first_bad_seq, 3u);

  // Rewriting the leaf hash as well only moves the failure to the inclusion proof.
  lines = Lines(Export(SampleRecord(0).time_ms, SampleRecord(12).time_ms));
  lines[4]["actor"] = "someone else";
  AuditRecord edited = *RecordFromJson(lines[4]);
  lines[4]["leaf_hash"] = ToHex(HashLeaf(CanonicalRecordBytes(edited)));
  r = Check(Join(lines));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_bad_seq, 3u);
}

TEST_F(BundleTest, AlteredProofForgedHeadAndWrongKeyFail) {
  std::vector<nlohmann::json> lines = Lines(Export(SampleRecord(0).time_ms, SampleRecord(12).time_ms));
  std::string path0 = lines[2]["inclusion"]["path"][0];
  path0[0] = path0[0] == '0' ? '1' : '0';
  std::vector<nlohmann::json> altered = lines;
  altered[2]["inclusion"]["path"][0] = path0;
  EXPECT_EQ(Check(Join(altered))->first_bad_seq, 1u);

  std::vector<nlohmann::json> forged = lines;
  forged.back()["timestamp_ms"] = forged.back()["timestamp_ms"].get<int64_t>() + 1;
  Result<BundleReport> r = Check(Join(forged));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());  // the head's signature fails, so no record is vouched for

  TempDir other;
  const PublicKey stranger = BuildLog(other.path(), 1, {});
  r = Check(Join(lines), &stranger);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
}

TEST_F(BundleTest, DroppedRecordsLeaveTheRestVerifiableButNotAReorder) {
  std::vector<nlohmann::json> lines = Lines(Export(SampleRecord(0).time_ms, SampleRecord(12).time_ms));
  std::vector<nlohmann::json> swapped = lines;
  std::swap(swapped[3], swapped[4]);
  Result<BundleReport> r = Check(Join(swapped));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
}

TEST_F(BundleTest, ARecordWhoseTimeGoesBackwardsIsReported) {
  std::vector<nlohmann::json> lines = Lines(Export(SampleRecord(0).time_ms, SampleRecord(12).time_ms));
  // Line 0 is the header; record 5 on line 6 is moved before record 4 in time, leaf rehashed.
  nlohmann::json& moved = lines[6];
  ASSERT_EQ(moved["seq"], 5);
  moved["time_ms"] = SampleRecord(4).time_ms - 1'000;
  Result<AuditRecord> r = RecordFromJson(moved);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  moved["leaf_hash"] = ToHex(HashLeaf(CanonicalRecordBytes(*r)));
  Result<BundleReport> report = Check(Join(lines));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->first_bad_seq, 5u);
  bool backwards = false;
  for (const std::string& p : report->problems) backwards |= p.find("record 5: time_ms") != std::string::npos;
  EXPECT_TRUE(backwards) << ::testing::PrintToString(report->problems);
}

TEST(BundleExport, RecordsNoHeadCoversYetAreLeftOut) {
  TempDir dir;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(testing::TestSinkOptions(dir.path()))).value();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
  ASSERT_TRUE(sink->SignHeadNow().ok());
  for (int i = 5; i < 7; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
  AuditStoreOptions ro;
  ro.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), ro)).value();
  ExportOptions o;
  o.with_proofs = true;
  std::stringstream bundle;
  Result<ExportSummary> s = ExportAuditLog(*store, o, bundle);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->records, 5u);
  Result<BundleReport> r = VerifyExportBundle(bundle, sink->public_key());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok());
  store.reset();
  ASSERT_TRUE(sink->Close().ok());
}

TEST_F(BundleTest, NotABundleIsAnInputError) {
  ExportOptions plain;
  std::ostringstream out;
  ASSERT_TRUE(ExportAuditLog(*store_, plain, out).ok());
  EXPECT_FALSE(Check(out.str()).ok());
  EXPECT_FALSE(Check("").ok());
}

}  // namespace
}  // namespace kimi::audit
