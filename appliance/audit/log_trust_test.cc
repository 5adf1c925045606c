// The writer refuses to extend a log it cannot vouch for: start-up verification (incremental,
// from the writer state's checkpoint), foreign rows after a clean stop, rows of a crash,
// heads of another key, time order, and the background verifier's full pass.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/background_verifier.h"
#include "audit/log_verifier.h"
#include "audit/merkle.h"
#include "audit/startup_verify.h"
#include "audit/test_util.h"
#include "audit/time_order.h"
#include "audit/writer_state.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::CopyLogFiles;
using testing::ForgeRow;
using testing::SampleRecord;
using testing::TamperSql;
using testing::TempDir;
using testing::TestSinkOptions;

std::unique_ptr<AuditStore> OpenReadOnly(const std::string& db) {
  AuditStoreOptions o;
  o.read_only = true;
  Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(db, o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

VerifyReport Verify(const std::string& db, const PublicKey& key) {
  std::unique_ptr<AuditStore> store = OpenReadOnly(db);
  if (store == nullptr) return {};
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : VerifyReport{};
}

// Opening a sink on dir fails, naming seq.
void ExpectOpenRefused(const std::string& dir, uint64_t seq, const std::string& why = "") {
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir));
  ASSERT_FALSE(sink.ok()) << "the writer extended a log it cannot vouch for";
  EXPECT_EQ(sink.status().code(), Status::Code::kCorruption);
  EXPECT_NE(sink.status().message().find("at seq " + std::to_string(seq) + " "), std::string::npos)
      << sink.status().message();
  if (!why.empty()) {
    EXPECT_NE(sink.status().message().find(why), std::string::npos) << sink.status().message();
  }
}

// A record someone writes past the log's end: the last record's fields, its own request id.
AuditRecord Foreign(uint64_t seq, int64_t time_ms) {
  AuditRecord r = SampleRecord(static_cast<int>(seq));
  r.seq = seq;
  r.version = kRecordFormatVersion;
  r.request_id = "req-forged";
  r.time_ms = time_ms;
  return r;
}

TEST(LogTrust, TheWriterStateSignatureCoversEveryField) {
  const AuditKey key = AuditKey::FromSeed(std::array<uint8_t, 32>{1});
  CompactTree tree;
  tree.AppendLeafHash(HashLeaf("a"));
  WriterState state;
  state.heads = 3;
  state.head_size = 9;
  state.timestamp_ms = 1'790'000'000'000;
  const WriterState signed_state = SignWriterState(key, state, tree);
  EXPECT_EQ(WriterStateSigningBytes(signed_state).size(), 113u);
  EXPECT_TRUE(VerifyWriterState(signed_state, key.public_key()).ok());
  ASSERT_TRUE(VerifiedTree(signed_state).ok());
  EXPECT_EQ(VerifiedTree(signed_state)->Root(), tree.Root());
  for (int field = 0; field < 6; ++field) {
    WriterState changed = signed_state;
    switch (field) {
      case 0: changed.heads += 1; break;
      case 1: changed.head_size += 1; break;
      case 2: changed.verified_size += 1; break;
      case 3: changed.verified_root[0] ^= 1; break;
      case 4: changed.timestamp_ms += 1; break;
      default: changed.clean = !changed.clean; break;
    }
    EXPECT_FALSE(VerifyWriterState(changed, key.public_key()).ok()) << field;
  }
  WriterState edge_swapped = signed_state;
  edge_swapped.verified_edge[0] ^= 1;
  EXPECT_FALSE(VerifiedTree(edge_swapped).ok()) << "an unsigned edge is trusted only with the signed root";
}

TEST(LogTrust, ARowAppendedAfterACleanStopIsForeign) {
  TempDir dir;
  const PublicKey key = BuildLog(dir.path(), 8, {4});
  // Leaf hash right, stored tree rewritten: only the clean stop's state tells it apart.
  ForgeRow(dir.File("audit.db"), Foreign(8, SampleRecord(8).time_ms));
  const VerifyReport report = Verify(dir.File("audit.db"), key);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.first_bad_seq, 8u);
  ExpectOpenRefused(dir.path(), 8, "not written by this appliance");
}

TEST(LogTrust, DeletingTheWriterStateDoesNotMakeAForeignRowAcceptable) {
  TempDir dir;
  BuildLog(dir.path(), 8, {4});
  ForgeRow(dir.File("audit.db"), Foreign(8, SampleRecord(8).time_ms));
  TamperSql(dir.File("audit.db"), "DELETE FROM audit_writer_state");
  ExpectOpenRefused(dir.path(), 8);
}

TEST(LogTrust, AStateMarkedRunningByHandIsForged) {
  TempDir dir;
  BuildLog(dir.path(), 8, {4});
  ForgeRow(dir.File("audit.db"), Foreign(8, SampleRecord(8).time_ms));
  TamperSql(dir.File("audit.db"), "UPDATE audit_writer_state SET clean = 0");
  ExpectOpenRefused(dir.path(), 8, "forged");
}

TEST(LogTrust, AnOlderStatePutBackDoesNotMatchTheHeads) {
  TempDir dir;
  BuildLog(dir.path(), 4, {});
  TempDir older;
  CopyLogFiles(dir.path(), older.path());
  {
    // A second run adds records and heads; then the first run's state is put back.
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
    ASSERT_TRUE(sink->Record(SampleRecord(4)).WaitCommitted().ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  TamperSql(dir.File("audit.db"), "ATTACH '" + older.File("audit.db") +
                                      "' AS old; DELETE FROM audit_writer_state; "
                                      "INSERT INTO audit_writer_state SELECT * FROM old.audit_writer_state;");
  ExpectOpenRefused(dir.path(), 4, "older state put back");
}

TEST(LogTrust, AnEditedRowStopsTheStartWithItsSeq) {
  TempDir dir;
  BuildLog(dir.path(), 12, {5});
  TamperSql(dir.File("audit.db"), "UPDATE audit_records SET http_status = 500 WHERE seq = 7");
  ExpectOpenRefused(dir.path(), 7);
}

TEST(LogTrust, AHeadSignedByAnotherKeyStopsTheStart) {
  TempDir dir;
  BuildLog(dir.path(), 12, {5});
  // The head of size 5, re-signed by a key that is not the appliance's.
  const AuditKey other = AuditKey::FromSeed(std::array<uint8_t, 32>{7});
  std::unique_ptr<AuditStore> store = OpenReadOnly(dir.File("audit.db"));
  Result<std::vector<Hash>> leaves = RecomputeLeafHashes(*store, 5);
  ASSERT_TRUE(leaves.ok());
  store.reset();
  const SignedTreeHead forged = other.Sign(5, SampleRecord(5).time_ms, TreeRoot(*leaves));
  TamperSql(dir.File("audit.db"), "UPDATE audit_heads SET key_id = x'" + ToHex(forged.key_id) + "', signature = x'" +
                                      ToHex(std::span<const uint8_t>(forged.signature)) + "' WHERE tree_size = 5");
  ExpectOpenRefused(dir.path(), 0, "forged");
}

TEST(LogTrust, AnotherKeyInTheDataDirectoryStopsTheStart) {
  TempDir dir;
  BuildLog(dir.path(), 6, {3});
  std::filesystem::remove(dir.File(std::string(kAuditKeyFile)));  // the next open makes a new key
  ExpectOpenRefused(dir.path(), 0, "forged");
}

TEST(LogTrust, RowsACrashLeftUnsignedAreTheWritersAndGetSigned) {
  TempDir dir;
  TempDir crashed;
  {
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
    ASSERT_TRUE(sink->SignHeadNow().ok());
    for (int i = 3; i < 6; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
    CopyLogFiles(dir.path(), crashed.path());  // killed here: 3 committed rows past the last head
    ASSERT_TRUE(sink->Close().ok());
  }
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(crashed.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  const PublicKey key = (*sink)->public_key();
  ASSERT_TRUE((*sink)->Close().ok());
  const VerifyReport report = Verify(crashed.File("audit.db"), key);
  EXPECT_TRUE(report.ok()) << report.problems.front();
  EXPECT_EQ(report.covered_size, 6u);
}

TEST(LogTrust, ARecordWhoseTimeGoesBackwardsFailsVerifyAndTheStart) {
  TempDir dir;
  TempDir crashed;
  PublicKey key{};
  {
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
    key = sink->public_key();
    CopyLogFiles(dir.path(), crashed.path());
    ASSERT_TRUE(sink->Close().ok());
  }
  // After a crash rows past the last head are legitimate, so a forged one there must be caught
  // by what it says: a time before its predecessor's.
  ForgeRow(crashed.File("audit.db"), Foreign(3, SampleRecord(2).time_ms - 5'000));
  const VerifyReport report = Verify(crashed.File("audit.db"), key);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.first_bad_seq, 3u);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_NE(report.problems.front().find("goes backwards"), std::string::npos) << report.problems.front();
  ExpectOpenRefused(crashed.path(), 3, "goes backwards");
}

TEST(LogTrust, ASecondEndOfAStreamFailsVerifyAndTheStart) {
  TempDir dir;
  TempDir crashed;
  PublicKey key{};
  AuditRecord start = SampleRecord(0);
  start.outcome = std::string(kOutcomeStreamStarted);
  {
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
    ASSERT_TRUE(sink->Record(start).WaitCommitted().ok());
    AuditRecord end = SampleRecord(1);
    end.request_id = start.request_id;
    end.start_seq = 0;
    ASSERT_TRUE(sink->Record(end).WaitCommitted().ok());
    for (int i = 2; i < 4; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
    key = sink->public_key();
    CopyLogFiles(dir.path(), crashed.path());
    ASSERT_TRUE(sink->Close().ok());
  }
  // Past the last head after a crash, with its leaf hash and the stored tree made to match: a
  // record in order of time that ends the stream a second time (to bury its real end).
  AuditRecord second_end = Foreign(3, SampleRecord(3).time_ms);
  second_end.request_id = start.request_id;
  second_end.outcome = std::string(kOutcomeStreamInterrupted);
  second_end.start_seq = 0;
  ForgeRow(crashed.File("audit.db"), second_end);
  const VerifyReport report = Verify(crashed.File("audit.db"), key);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.first_bad_seq, 3u);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_NE(report.problems.front().find("not an open stream's start"), std::string::npos) << report.problems.front();
  ExpectOpenRefused(crashed.path(), 3, "not an open stream's start");
}

TEST(LogTrust, RecordsMayShareAMillisecond) {
  TimeOrder order;
  EXPECT_FALSE(order.Next(100).has_value());
  EXPECT_FALSE(order.Next(100).has_value());
  EXPECT_FALSE(order.Next(101).has_value());
  EXPECT_TRUE(order.Next(99).has_value());
  EXPECT_TRUE(order.Next(100).has_value()) << "held to the highest time seen";
}

TEST(LogTrust, TheWriterNeverWritesTimeBackwards) {
  TempDir dir;
  AuditSinkOptions o = TestSinkOptions(dir.path());
  auto now = std::make_shared<std::atomic<int64_t>>(1'790'000'000'000);
  o.clock_ms = [now] { return now->load(); };
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(o)).value();
  AuditRecord first = SampleRecord(0);
  first.time_ms = 0;  // stamped by the sink
  ASSERT_TRUE(sink->Record(first).WaitCommitted().ok());
  now->store(1'789'999'000'000);  // the clock steps back a thousand seconds
  AuditRecord second = SampleRecord(1);
  second.time_ms = 0;
  ASSERT_TRUE(sink->Record(second).WaitCommitted().ok());
  AuditRecord old_event = SampleRecord(2);
  old_event.time_ms = 1'000;  // an event queued long ago (the auth outbox)
  ASSERT_TRUE(sink->Record(old_event).WaitCommitted().ok());
  const PublicKey key = sink->public_key();
  ASSERT_TRUE(sink->Close().ok());
  std::unique_ptr<AuditStore> store = OpenReadOnly(dir.File("audit.db"));
  for (uint64_t seq = 0; seq < 3; ++seq) EXPECT_EQ((*store->ReadRecord(seq))->record.time_ms, 1'790'000'000'000) << seq;
  store.reset();
  EXPECT_TRUE(Verify(dir.File("audit.db"), key).ok());
  // And the next start goes on from the log's last time, not the clock's.
  sink = std::move(AuditSink::Open(o)).value();
  ASSERT_TRUE(sink->Record(second).WaitCommitted().ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_TRUE(Verify(dir.File("audit.db"), key).ok());
}

TEST(LogTrust, TheStartReadsOnlyRowsPastItsCheckpointAndTheBackgroundPassReadsAll) {
  TempDir dir;
  const PublicKey key = BuildLog(dir.path(), 40, {10});
  {
    // This start verifies rows 0..39 and makes them its checkpoint.
    std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
    for (int i = 40; i < 43; ++i) ASSERT_TRUE(sink->Record(SampleRecord(i)).WaitCommitted().ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  {
    std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), AuditStoreOptions{})).value();
    Result<VerifiedLog> verified = VerifyBeforeExtending(*store, key);
    ASSERT_TRUE(verified.ok()) << verified.status().ToString();
    EXPECT_EQ(verified->rows_checked, 3u) << "rows past the checkpoint only";
    EXPECT_EQ(verified->tree.size(), 43u);
  }
  // An edit below the checkpoint: the start does not read that row again ...
  TamperSql(dir.File("audit.db"), "UPDATE audit_records SET outcome = 'denied' WHERE seq = 12");
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  EXPECT_TRUE((*sink)->Healthy());
  // ... the background pass does, and the writer signs nothing more.
  std::string verdict;
  {
    BackgroundVerifier full(dir.File("audit.db"), key, [&](const std::string& reason) {
      verdict = reason;
      (*sink)->Distrust(reason);
    });
    full.Wait();
  }
  EXPECT_EQ(verdict.rfind("seq 12 ", 0), 0u) << verdict;
  EXPECT_FALSE((*sink)->Healthy());
  EXPECT_NE((*sink)->Reason().find("seq 12"), std::string::npos) << (*sink)->Reason();
  EXPECT_FALSE((*sink)->SignHeadNow().ok());
  EXPECT_FALSE((*sink)->Close().ok()) << "no clean stop is signed over a log that fails";
  sink->reset();
  // The verdict outlives the run: the next start verifies from seq 0 and refuses.
  ExpectOpenRefused(dir.path(), 12);
}

}  // namespace
}  // namespace kimi::audit
