#include "cli/audit_commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/log_verifier.h"
#include "audit/merkle.h"
#include "audit/test_util.h"

namespace kimi::cli {
namespace {

using audit::testing::BuildLog;
using audit::testing::TamperSql;
using audit::testing::TempDir;

class AuditCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { BuildLog(dir_.path(), 9, {3}); }
  int Run(int (*cmd)(const std::vector<std::string>&, std::ostream&, std::ostream&), std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    args.push_back("--data-dir");
    args.push_back(dir_.path());
    return cmd(args, out_, err_);
  }
  TempDir dir_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(AuditCommandsTest, VerifyPassesThenReportsTheFirstBadSeq) {
  EXPECT_EQ(Run(RunAuditVerify, {}), 0) << out_.str() << err_.str();
  EXPECT_NE(out_.str().find("audit log verifies"), std::string::npos);
  TamperSql(dir_.File("audit.db"), "UPDATE audit_records SET role = 'admin' WHERE seq = 6");
  EXPECT_EQ(Run(RunAuditVerify, {}), 1);
  EXPECT_NE(out_.str().find("first bad sequence number 6"), std::string::npos) << out_.str();
}

TEST_F(AuditCommandsTest, DeletingHeadsAndTheLastRecordIsCaughtByTheWriterState) {
  // Someone deletes the last record, every signed head, and rewrites the writer's tree state
  // to match: the signed writer state still counts the heads.
  std::string root_hex;
  {
    audit::AuditStoreOptions o;
    o.read_only = true;
    auto store = audit::AuditStore::Open(dir_.File("audit.db"), o);
    ASSERT_TRUE(store.ok());
    auto leaves = audit::RecomputeLeafHashes(**store, 8);
    ASSERT_TRUE(leaves.ok());
    root_hex = audit::ToHex(audit::TreeRoot(*leaves));  // size 8: the edge is the root alone
  }
  TamperSql(dir_.File("audit.db"), "DELETE FROM audit_records WHERE seq = 8; DELETE FROM audit_heads; "
                                   "UPDATE audit_tree SET size = 8, edge = x'" + root_hex + "'");
  EXPECT_EQ(Run(RunAuditVerify, {}), 1) << out_.str();
  EXPECT_NE(out_.str().find("heads deleted or added"), std::string::npos) << out_.str();
  // And with the state deleted too, no row is vouched for past the (now missing) heads.
  TamperSql(dir_.File("audit.db"), "DELETE FROM audit_writer_state");
  EXPECT_EQ(Run(RunAuditVerify, {}), 1) << out_.str();
  EXPECT_NE(out_.str().find("first bad sequence number 0"), std::string::npos) << out_.str();
}

// Appends records through the writer, as the daemon's next run would.
void AppendRecords(const std::string& dir, int from, int to) {
  auto sink = audit::AuditSink::Open(audit::testing::TestSinkOptions(dir));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  for (int i = from; i < to; ++i) ASSERT_TRUE((*sink)->Record(audit::testing::SampleRecord(i)).WaitCommitted().ok());
  ASSERT_TRUE((*sink)->Close().ok());
}

size_t LineCount(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

TEST_F(AuditCommandsTest, WitnessedHeadsCatchARollbackToAnEarlierCopy) {
  TempDir early;
  audit::testing::CopyLogFiles(dir_.path(), early.path());
  const std::string witness = dir_.File("witness.jsonl");
  ASSERT_EQ(Run(RunAuditWitness, {"--append", witness}), 0) << out_.str() << err_.str();
  AppendRecords(dir_.path(), 9, 12);
  ASSERT_EQ(Run(RunAuditWitness, {"--append", witness}), 0) << out_.str() << err_.str();
  ASSERT_EQ(Run(RunAuditWitness, {"--append", witness}), 0) << out_.str() << err_.str();
  EXPECT_EQ(LineCount(witness), 2u) << "a head already witnessed is not repeated";
  ASSERT_EQ(Run(RunAuditVerify, {"--head", witness}), 0) << out_.str() << err_.str();
  EXPECT_NE(out_.str().find("(2 kept)"), std::string::npos) << out_.str();

  // The host puts back the earlier copy of the database: consistent on its own, ...
  audit::testing::CopyLogFiles(early.path(), dir_.path());
  EXPECT_EQ(Run(RunAuditVerify, {}), 0) << out_.str();
  // ... but not with the heads the auditor holds; and nothing more is witnessed.
  EXPECT_EQ(Run(RunAuditVerify, {"--head", witness}), 1) << out_.str();
  EXPECT_NE(out_.str().find("first bad sequence number 9"), std::string::npos) << out_.str();
  EXPECT_EQ(Run(RunAuditWitness, {"--append", witness}), 1) << err_.str();
  EXPECT_NE(err_.str().find("nothing witnessed"), std::string::npos) << err_.str();
  EXPECT_EQ(LineCount(witness), 2u);
}

TEST_F(AuditCommandsTest, WitnessPrintsOrWritesTheNewestHead) {
  ASSERT_EQ(Run(RunAuditWitness, {}), 0) << err_.str();
  const std::string line = out_.str();
  Result<audit::SignedTreeHead> printed = audit::TreeHeadFromJson(nlohmann::json::parse(out_.str()));
  ASSERT_TRUE(printed.ok());
  EXPECT_EQ(printed->tree_size, 9u);
  EXPECT_EQ(out_.str().find('\n'), out_.str().size() - 1) << "one line, for >> into a witness file";
  ASSERT_EQ(Run(RunAuditWitness, {"--out", dir_.File("head.json")}), 0) << err_.str();
  ASSERT_EQ(Run(RunAuditVerify, {"--head", dir_.File("head.json")}), 0) << out_.str();
  EXPECT_EQ(Run(RunAuditWitness, {"--out", "x", "--append", "y"}), 2);
  // A witness file with a line that is not a signed head is an input error, not a pass.
  std::ofstream(dir_.File("bad.jsonl")) << line << "{\"format\":\"nope\"}\n";
  EXPECT_EQ(Run(RunAuditVerify, {"--head", dir_.File("bad.jsonl")}), 2);
  EXPECT_NE(err_.str().find("line 2"), std::string::npos) << err_.str();
}

TEST_F(AuditCommandsTest, ProveAndConsistencyPrintProofJson) {
  ASSERT_EQ(Run(RunAuditProve, {"4"}), 0) << err_.str();
  const auto proof = nlohmann::json::parse(out_.str());
  EXPECT_EQ(proof["format"], "kimi-audit-inclusion/1");
  EXPECT_EQ(proof["leaf_index"], 4);
  EXPECT_EQ(proof["tree_size"], 9);
  ASSERT_EQ(Run(RunAuditConsistency, {"3"}), 0) << err_.str();
  const auto con = nlohmann::json::parse(out_.str());
  EXPECT_EQ(con["old_size"], 3);
  EXPECT_FALSE(con["old_head"].is_null());
  EXPECT_EQ(Run(RunAuditProve, {"99"}), 2);
  EXPECT_EQ(Run(RunAuditProve, {}), 2);
  EXPECT_EQ(Run(RunAuditProve, {"x"}), 2);
}

TEST_F(AuditCommandsTest, ExportAndHead) {
  ASSERT_EQ(Run(RunAuditExport, {"--format", "csv", "--since", "1970-01-01"}), 0) << err_.str();
  EXPECT_EQ(out_.str().rfind("type,seq,time", 0), 0u);
  EXPECT_EQ(Run(RunAuditExport, {"--format", "xml"}), 2);
  EXPECT_EQ(Run(RunAuditExport, {}), 2);  // --format has no default
  EXPECT_EQ(Run(RunAuditExport, {"--bogus", "1"}), 2);
  ASSERT_EQ(Run(RunAuditHead, {}), 0);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["tree_size"], 9);
}

TEST_F(AuditCommandsTest, ListFiltersByOutcome) {
  // Sample records are all "ok"; one is made an interrupted stream's end.
  TamperSql(dir_.File("audit.db"), "UPDATE audit_records SET outcome = 'interrupted' WHERE seq = 5");
  ASSERT_EQ(Run(RunAuditList, {"--outcome", "interrupted"}), 0) << err_.str();
  std::istringstream lines(out_.str());
  std::vector<nlohmann::json> listed;
  for (std::string line; std::getline(lines, line);) listed.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(listed.size(), 1u) << out_.str();
  EXPECT_EQ(listed[0]["seq"], 5);
  EXPECT_EQ(listed[0]["outcome"], "interrupted");
  EXPECT_FALSE(listed[0].contains("content"));
  ASSERT_EQ(Run(RunAuditList, {"--limit", "3"}), 0);
  const std::string three = out_.str();
  EXPECT_EQ(std::count(three.begin(), three.end(), '\n'), 3);
  EXPECT_EQ(Run(RunAuditList, {"--limit", "x"}), 2);
  EXPECT_EQ(Run(RunAuditList, {"extra"}), 2);
}

TEST_F(AuditCommandsTest, BundleExportVerifiesThenAnEditIsReported) {
  const std::string bundle = dir_.File("bundle.jsonl");
  ASSERT_EQ(Run(RunAuditExport, {"--format", "bundle", "--out", bundle}), 0) << err_.str();
  ASSERT_EQ(Run(RunAuditVerify, {"--export", bundle}), 0) << out_.str() << err_.str();
  EXPECT_NE(out_.str().find("export bundle verifies"), std::string::npos);

  std::ifstream in(bundle);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  in.close();
  ASSERT_GT(lines.size(), 5u);
  lines[5]["http_status"] = 500;  // record 4
  std::ofstream edited(bundle, std::ios::trunc);
  for (const auto& j : lines) edited << j.dump() << "\n";
  edited.close();
  EXPECT_EQ(Run(RunAuditVerify, {"--export", bundle}), 1);
  EXPECT_NE(out_.str().find("first bad sequence number 4"), std::string::npos) << out_.str();
  EXPECT_EQ(Run(RunAuditVerify, {"--export", dir_.File("missing.jsonl")}), 2);
}

// An export that fails halfway (a record that no longer verifies, met after the first lines
// were written) leaves --out as it was, not a truncated bundle in place of the good one.
TEST_F(AuditCommandsTest, AnExportThatFailsLeavesTheOutputFileAsItWas) {
  const std::string bundle = dir_.File("bundle.jsonl");
  ASSERT_EQ(Run(RunAuditExport, {"--format", "bundle", "--out", bundle}), 0) << err_.str();
  std::ifstream good_in(bundle);
  const std::string good((std::istreambuf_iterator<char>(good_in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(good.empty());
  const auto entries = [&] {
    return std::distance(std::filesystem::directory_iterator(dir_.path()), std::filesystem::directory_iterator());
  };
  const auto before = entries();
  TamperSql(dir_.File("audit.db"), "UPDATE audit_records SET role = 'admin' WHERE seq = 6");
  EXPECT_NE(Run(RunAuditExport, {"--format", "bundle", "--out", bundle}), 0);
  EXPECT_NE(err_.str().find("fails verification"), std::string::npos) << err_.str();
  std::ifstream after_in(bundle);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>()), good);
  EXPECT_EQ(entries(), before);  // no temporary file left
}

}  // namespace
}  // namespace kimi::cli
