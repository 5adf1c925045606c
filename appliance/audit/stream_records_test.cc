// The records of streamed responses in the audit module: record format 4's start_seq, the
// store's open streams, the "interrupted" end records written at the next start, and the
// records the sink keeps while its store fails (audit_sink.h, audit_store.h).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/log_verifier.h"
#include "audit/record.h"
#include "audit/record_builder.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::DatabaseWriteLock;
using testing::Eventually;
using testing::RunThenKill9;
using testing::SampleRecord;
using testing::TempDir;
using testing::TestSinkOptions;

AuditRecord StreamStart(int i) {
  AuditRecord r = SampleRecord(i);
  r.outcome = std::string(kOutcomeStreamStarted);
  r.request_id = "req-stream-" + std::to_string(i);
  r.content.reset();
  return r;
}

AuditRecord StreamEnd(const AuditRecord& start, uint64_t start_seq) {
  return RecordBuilder::StreamEnd(start, start_seq).Outcome("ok").ResponseHash(std::string(64, 'b')).Build();
}

std::vector<AuditRecord> ReadAll(const TempDir& dir) {
  AuditStoreOptions o;
  o.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), o)).value();
  std::vector<AuditRecord> out;
  EXPECT_TRUE(store->ScanRecords(RecordQuery{}, [&](StoredRecord& r) {
    EXPECT_TRUE(r.decode_error.ok()) << r.decode_error.ToString();
    out.push_back(r.record);
    return Status::OK();
  }).ok());
  return out;
}

bool Verifies(const TempDir& dir, const PublicKey& key) {
  AuditStoreOptions o;
  o.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), o)).value();
  Result<VerifyReport> report = VerifyAuditLog(*store, key);
  return report.ok() && report->ok();
}

TEST(StreamRecordFormat, Version4HashesStartSeqAndOlderVersionsKeepTheirBytes) {
  AuditRecord r = SampleRecord(3);
  NormalizeRecord(&r);
  r.start_seq = 17;
  const std::string v4 = CanonicalRecordBytes(r);
  EXPECT_NE(v4.find("\"source\":\"127.0.0.1:40003\",\"start_seq\":17,\"target\""), std::string::npos) << v4;
  EXPECT_NE(v4.find("\"v\":4"), std::string::npos);
  r.start_seq = 18;
  EXPECT_NE(CanonicalRecordBytes(r), v4);  // the link is in the leaf
  r.version = 3;
  EXPECT_EQ(CanonicalRecordBytes(r).find("start_seq"), std::string::npos);
  // Exported and read back for verification, with and without the key.
  r.version = 4;
  Result<AuditRecord> back = RecordFromJson(RecordToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->start_seq, 18);
  nlohmann::json missing = RecordToJson(r);
  missing.erase("start_seq");
  EXPECT_FALSE(RecordFromJson(missing).ok());
  r.version = 3;
  EXPECT_TRUE(RecordFromJson(RecordToJson(r)).ok());
}

TEST(StreamRecordFormat, TheEndRecordCarriesTheRequestsIdentity) {
  AuditRecord start = StreamStart(4);
  start.seq = 41;
  start.policy = {"policy:v1"};
  const AuditRecord end = RecordBuilder::StreamEnd(start, start.seq).Build();
  EXPECT_EQ(end.start_seq, 41);
  for (auto field : {&AuditRecord::actor, &AuditRecord::role, &AuditRecord::source, &AuditRecord::request_id,
                     &AuditRecord::client_request_id, &AuditRecord::action, &AuditRecord::model,
                     &AuditRecord::model_digest, &AuditRecord::request_sha256}) {
    EXPECT_EQ(end.*field, start.*field);
  }
  EXPECT_EQ(end.policy, start.policy);
  EXPECT_EQ(end.time_ms, 0);  // the sink's clock, when it is written
  EXPECT_TRUE(end.outcome.empty());
}

TEST(OpenStreams, AStartOpensAStreamAndItsEndClosesItInTheSameTransaction) {
  TempDir dir;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
  ASSERT_TRUE(sink->Record(SampleRecord(0)).WaitCommitted().ok());
  Ticket a = sink->Record(StreamStart(1));
  Ticket b = sink->Record(StreamStart(2));
  ASSERT_TRUE(a.WaitCommitted().ok());
  ASSERT_TRUE(b.WaitCommitted().ok());
  ASSERT_TRUE(sink->Record(StreamEnd(StreamStart(1), a.seq())).WaitCommitted().ok());
  const PublicKey key = sink->public_key();
  ASSERT_TRUE(sink->Close().ok());

  AuditStoreOptions writable;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), writable)).value();
  Result<std::vector<uint64_t>> open = store->OpenStreams();
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(*open, std::vector<uint64_t>{b.seq()});
  store.reset();
  EXPECT_TRUE(Verifies(dir, key));
}

// The open streams' table is not signed: a row naming a record that is no stream's start, or a
// stream a record already ended, refuses the start instead of becoming an end record that every
// later start refuses (an INSERT of seq 0 bricked the appliance).
TEST(OpenStreams, AnEditedOpenStreamsTableRefusesTheStart) {
  for (const bool ended_stream : {false, true}) {
    TempDir dir;
    {
      std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
      ASSERT_TRUE(sink->Record(SampleRecord(0)).WaitCommitted().ok());
      Ticket start = sink->Record(StreamStart(1));
      ASSERT_TRUE(start.WaitCommitted().ok());
      ASSERT_TRUE(sink->Record(StreamEnd(StreamStart(1), start.seq())).WaitCommitted().ok());
      ASSERT_TRUE(sink->Close().ok());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.File("audit.db").c_str(), &db), SQLITE_OK);
    const char* insert = ended_stream ? "INSERT INTO audit_open_streams(seq) VALUES(1)"
                                      : "INSERT INTO audit_open_streams(seq) VALUES(0)";
    ASSERT_EQ(sqlite3_exec(db, insert, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    Result<std::unique_ptr<AuditSink>> reopened = AuditSink::Open(TestSinkOptions(dir.path()));
    ASSERT_FALSE(reopened.ok()) << (ended_stream ? "an ended stream" : "a plain record");
    EXPECT_EQ(reopened.status().code(), Status::Code::kCorruption);
    EXPECT_NE(reopened.status().message().find(ended_stream ? "already ends it" : "no stream's start"), std::string::npos)
        << reopened.status().ToString();
  }
}

TEST(OpenStreams, StreamsOpenWhenTheWriterDiedAreRecordedInterruptedAtTheNextStart) {
  TempDir dir;
  // Two streams start, one ends, then the process dies with the other still running.
  ASSERT_TRUE(RunThenKill9([&] {
    Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir.path()));
    if (!sink.ok()) return false;
    Ticket cut = (*sink)->Record(StreamStart(1));
    Ticket done = (*sink)->Record(StreamStart(2));
    if (!cut.WaitCommitted().ok() || !done.WaitCommitted().ok()) return false;
    return (*sink)->Record(StreamEnd(StreamStart(2), done.seq())).WaitCommitted().ok();
  }));

  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
  Result<uint64_t> interrupted = sink->RecordInterruptedStreams();
  ASSERT_TRUE(interrupted.ok()) << interrupted.status().ToString();
  EXPECT_EQ(*interrupted, 1u);
  Result<uint64_t> again = sink->RecordInterruptedStreams();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
  const PublicKey key = sink->public_key();
  ASSERT_TRUE(sink->Close().ok());

  const std::vector<AuditRecord> records = ReadAll(dir);
  ASSERT_EQ(records.size(), 4u);
  const AuditRecord& end = records[3];
  EXPECT_EQ(end.outcome, "interrupted");
  EXPECT_EQ(end.start_seq, static_cast<int64_t>(records[0].seq));
  EXPECT_EQ(end.request_id, "req-stream-1");
  EXPECT_EQ(end.actor, records[0].actor);
  EXPECT_EQ(end.model, records[0].model);
  EXPECT_FALSE(end.detail.empty());
  EXPECT_TRUE(Verifies(dir, key));

  // Ended now: a further start finds nothing open.
  sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
  Result<uint64_t> later = sink->RecordInterruptedStreams();
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(*later, 0u);
  ASSERT_TRUE(sink->Close().ok());
}

AuditSinkOptions FailingFast(const TempDir& dir) {
  AuditSinkOptions options = TestSinkOptions(dir.path());
  options.store.busy_timeout_ms = 50;
  options.probe_interval_ms = 20;
  return options;
}

TEST(KeptRecords, ARecordTheStoreCannotTakeIsWrittenOnceItCan) {
  TempDir dir;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(FailingFast(dir))).value();
  Ticket start = sink->Record(StreamStart(1));
  ASSERT_TRUE(start.WaitCommitted().ok());
  DatabaseWriteLock lock(dir.File("audit.db"));
  EXPECT_FALSE(sink->Record(SampleRecord(2)).WaitCommitted().ok());  // an ordinary record fails
  Ticket end = sink->RecordWhenWritable(StreamEnd(StreamStart(1), start.seq()));
  ASSERT_TRUE(Eventually([&] { return !sink->Healthy(); }));
  lock.Release();
  ASSERT_TRUE(end.WaitCommitted().ok());  // kept through the failure, written after it
  EXPECT_TRUE(sink->Healthy());
  const PublicKey key = sink->public_key();
  ASSERT_TRUE(sink->Close().ok());
  const std::vector<AuditRecord> records = ReadAll(dir);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].start_seq, static_cast<int64_t>(start.seq()));
  EXPECT_EQ(records[1].seq, end.seq());
  EXPECT_TRUE(Verifies(dir, key));
  // The stream is closed: nothing is left for the next start.
  sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
  EXPECT_EQ(*sink->RecordInterruptedStreams(), 0u);
  ASSERT_TRUE(sink->Close().ok());
}

// A long outage under load: past max_kept, a record to keep fails as an ordinary one does,
// and those kept are still written once the store takes them.
TEST(KeptRecords, NoMoreThanMaxKeptAreHeldThroughAnOutage) {
  TempDir dir;
  AuditSinkOptions options = FailingFast(dir);
  options.max_kept = 3;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(options)).value();
  std::vector<Ticket> starts;
  for (int i = 0; i < 5; ++i) {
    starts.push_back(sink->Record(StreamStart(i)));
    ASSERT_TRUE(starts.back().WaitCommitted().ok());
  }
  DatabaseWriteLock lock(dir.File("audit.db"));
  ASSERT_FALSE(sink->Record(SampleRecord(9)).WaitCommitted().ok());
  ASSERT_TRUE(Eventually([&] { return !sink->Healthy(); }));
  std::vector<Ticket> ends;
  for (int i = 0; i < 5; ++i) ends.push_back(sink->RecordWhenWritable(StreamEnd(StreamStart(i), starts[size_t(i)].seq())));
  // The two past the bound fail while the store still fails; the three kept are written after.
  EXPECT_EQ(ends[3].WaitCommitted().code(), Status::Code::kUnavailable);
  EXPECT_EQ(ends[4].WaitCommitted().code(), Status::Code::kUnavailable);
  lock.Release();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(ends[size_t(i)].WaitCommitted().ok()) << i;
  ASSERT_TRUE(sink->Close().ok());
}

TEST(KeptRecords, ClosingWhileTheStoreFailsLeavesTheStreamForTheNextStart) {
  TempDir dir;
  std::unique_ptr<AuditSink> sink = std::move(AuditSink::Open(FailingFast(dir))).value();
  Ticket start = sink->Record(StreamStart(1));
  ASSERT_TRUE(start.WaitCommitted().ok());
  {
    DatabaseWriteLock lock(dir.File("audit.db"));
    Ticket end = sink->RecordWhenWritable(StreamEnd(StreamStart(1), start.seq()));
    (void)sink->Close();
    EXPECT_EQ(end.WaitCommitted().code(), Status::Code::kUnavailable);
  }
  sink = std::move(AuditSink::Open(TestSinkOptions(dir.path()))).value();
  Result<uint64_t> interrupted = sink->RecordInterruptedStreams();
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(*interrupted, 1u);
  ASSERT_TRUE(sink->Close().ok());
  const std::vector<AuditRecord> records = ReadAll(dir);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].outcome, "interrupted");
}

}  // namespace
}  // namespace kimi::audit
