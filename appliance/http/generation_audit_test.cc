#include "http/generation_audit.h"

#include <gtest/gtest.h>

#include <functional>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/hash.h"
#include "audit/test_util.h"
#include "http/request_audit.h"

namespace kimi::http {
namespace {

RequestContext ModelRequest() {
  RequestContext ctx;
  ctx.request_id = "req-stream";
  ctx.remote_addr = "127.0.0.1:4000";
  ctx.start = std::chrono::steady_clock::now();
  ctx.route = "chat_completions";
  ctx.audit.model = "kimi-k3-nano";
  ctx.audit.model_digest = std::string(64, 'a');
  ctx.audit.backend = "router";
  ctx.audit.ttft_us = 1234;
  return ctx;
}

api::StreamEvent Answer(std::string text) {
  api::StreamEvent e;
  e.kind = api::StreamEventKind::kAnswer;
  e.text = std::move(text);
  return e;
}

api::StreamEvent Finish(int64_t prompt, int64_t completion) {
  api::StreamEvent e;
  e.kind = api::StreamEventKind::kFinish;
  e.finish_reason = "stop";
  e.usage.prompt_tokens = prompt;
  e.usage.completion_tokens = completion;
  return e;
}

audit::AuditSinkOptions PlainOptions(const std::string& dir) {
  audit::AuditSinkOptions options;
  options.data_dir = dir;
  return options;
}

struct Fixture {
  explicit Fixture(AuditPolicy policy = {},
                   const std::function<audit::AuditSinkOptions(const std::string&)>& options = PlainOptions)
      : sink(std::move(audit::AuditSink::Open(options(dir.path()))).value()), auditor(policy, sink.get()) {}
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink;
  RequestAuditor auditor;
};

Exchange StreamExchange(const RequestContext& ctx, std::string_view body = "{}") {
  return Exchange{&ctx, "POST", "/v1/chat/completions", 200, body, {}};
}

TEST(StreamAuditTest, TheStartRecordIsCommittedBeforeTheFirstByte) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  GenerationTally tally;
  tally.estimated_prompt_tokens = 9;
  StreamAudit stream(ctx.audit, tally, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  // Read while the sink is still open: the start record is durable before anything is sent.
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 1u);
  const audit::AuditRecord& start = records[0];
  EXPECT_EQ(start.outcome, "started");
  EXPECT_EQ(start.request_id, "req-stream");
  EXPECT_EQ(start.action, "http.chat_completions");
  EXPECT_EQ(start.model, "kimi-k3-nano");
  EXPECT_EQ(start.model_digest, std::string(64, 'a'));
  EXPECT_EQ(start.request_sha256, audit::ToHex(audit::Sha256("{}")));
  EXPECT_EQ(start.prompt_tokens, 9);
  EXPECT_EQ(start.response_sha256, "");
  EXPECT_EQ(start.start_seq, audit::kNoStartSeq);
  EXPECT_EQ(start.version, audit::kRecordFormatVersion);
  ASSERT_TRUE(stream.start_seq().has_value());
  EXPECT_EQ(*stream.start_seq(), start.seq);
}

TEST(StreamAuditTest, TheStartRecordCountsThePromptAsTheBackendReportedItWithTheFirstEvent) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  GenerationTally tally;
  tally.estimated_prompt_tokens = 9;
  StreamAudit stream(ctx.audit, tally, ctx.start);
  api::StreamEvent first;
  first.kind = api::StreamEventKind::kAnswer;
  first.text = "Hi";
  first.usage.prompt_tokens = 108;  // the engine's count of its tokenised prompt
  stream.NoteEvent(first);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].prompt_tokens, 108);
}

TEST(StreamAuditTest, TheEndRecordHashesEverySentByteAndTheFinalFramesAndLinksToTheStart) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  stream.NoteEvent(Answer("Hel"));
  stream.Sent("data: one\n\n");
  stream.NoteEvent(Finish(7, 3));
  api::BackendOutcome served{"embedded", 2, "embedded (load 0), retried once"};
  stream.NoteOutcome(served);
  std::string tail = "data: [DONE]\n\n";
  ASSERT_TRUE(stream.Finish(kOutcomeCompleted, &tail).ok());
  EXPECT_EQ(tail, "data: [DONE]\n\n");
  EXPECT_TRUE(stream.finished());
  std::string more = "more";
  EXPECT_TRUE(stream.Finish(kOutcomeInterrupted, &more).ok());  // a second end changes nothing
  ASSERT_TRUE(f.sink->Close().ok());

  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 2u);
  const audit::AuditRecord& r = records[1];
  EXPECT_EQ(r.start_seq, static_cast<int64_t>(records[0].seq));
  EXPECT_EQ(r.request_id, records[0].request_id);
  EXPECT_EQ(r.response_sha256, audit::ToHex(audit::Sha256("data: one\n\ndata: [DONE]\n\n")));
  EXPECT_EQ(r.request_sha256, audit::ToHex(audit::Sha256("{}")));
  EXPECT_EQ(r.outcome, "ok");
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.prompt_tokens, 7);
  EXPECT_EQ(r.completion_tokens, 3);
  EXPECT_EQ(r.ttft_us, 1234);
  EXPECT_EQ(r.model, "kimi-k3-nano");
  EXPECT_EQ(r.model_digest, std::string(64, 'a'));
  EXPECT_EQ(r.backend, "embedded");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.route_decision, "embedded (load 0), retried once");
  EXPECT_EQ(r.detail, "finish_reason stop");
  EXPECT_EQ(r.version, audit::kRecordFormatVersion);
  EXPECT_FALSE(r.content.has_value());  // the default policy keeps no content
  EXPECT_TRUE(r.content_sha256.empty());
}

TEST(StreamAuditTest, ADisconnectedClientIsRecordedWithWhatItReceived) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  stream.Sent("data: partial\n\n");
  ASSERT_TRUE(stream.Finish(kOutcomeClientDisconnected, nullptr).ok());
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].outcome, "client_disconnected");
  EXPECT_EQ(records[1].response_sha256, audit::ToHex(audit::Sha256("data: partial\n\n")));
}

TEST(StreamAuditTest, ContentIsKeptOnlyWhenThePolicySaysSo) {
  AuditPolicy keep;
  keep.content = audit::AuditContentPolicy{true, 30};
  Fixture f(keep);
  RequestContext ctx = ModelRequest();
  GenerationTally tally;
  tally.keep_completion_text = true;
  StreamAudit stream(ctx.audit, tally, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx, "{\"q\":1}"))).ok());
  stream.NoteEvent(Answer("Hello"));
  stream.NoteEvent(Answer(", world"));
  std::string tail = "data: [DONE]\n\n";
  ASSERT_TRUE(stream.Finish(kOutcomeCompleted, &tail).ok());
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 2u);
  // The start holds the prompt, the end the answer.
  ASSERT_TRUE(records[0].content.has_value());
  EXPECT_EQ(records[0].content->prompt, "{\"q\":1}");
  EXPECT_EQ(records[0].content->completion, "");
  ASSERT_TRUE(records[1].content.has_value());
  EXPECT_EQ(records[1].content->prompt, "");
  EXPECT_EQ(records[1].content->completion, "Hello, world");
  EXPECT_EQ(records[1].content_sha256.size(), 64u);
}

TEST(StreamAuditTest, WithoutAStartNothingIsRecorded) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  stream.Sent("data: x\n\n");
  EXPECT_TRUE(stream.Finish(kOutcomeCompleted, nullptr).ok());
  ASSERT_TRUE(f.sink->Close().ok());
  EXPECT_EQ(audit::testing::RecordsIn(f.dir.path()).size(), 0u);
}

audit::AuditSinkOptions FastFailingOptions(const std::string& dir) {
  audit::AuditSinkOptions options;
  options.data_dir = dir;
  options.store.busy_timeout_ms = 50;
  options.probe_interval_ms = 20;
  return options;
}

TEST(StreamAuditTest, AStreamWhoseStartCannotBeCommittedDoesNotStart) {
  Fixture f(AuditPolicy{}, FastFailingOptions);
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  audit::testing::DatabaseWriteLock lock(f.dir.path() + "/audit.db");
  const Status started = stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx)));
  EXPECT_EQ(started.code(), Status::Code::kUnavailable);
  EXPECT_FALSE(stream.start_seq().has_value());
  lock.Release();
  ASSERT_TRUE(f.sink->Close().ok());
  EXPECT_EQ(audit::testing::RecordsIn(f.dir.path()).size(), 0u);
}

TEST(StreamAuditTest, AStoreFailingMidStreamStopsItAndItsEndIsWrittenWhenTheStoreIsBack) {
  Fixture f(AuditPolicy{}, FastFailingOptions);
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  EXPECT_TRUE(stream.CheckWritable().ok());
  stream.Sent("data: one\n\n");

  audit::testing::DatabaseWriteLock lock(f.dir.path() + "/audit.db");
  // Some write must fail for the sink to learn the store is gone: another request's record.
  EXPECT_FALSE(f.sink->Record(audit::testing::SampleRecord(1)).WaitCommitted().ok());
  const Status writable = stream.CheckWritable();
  ASSERT_EQ(writable.code(), Status::Code::kUnavailable);  // the writer stops at its next frame

  std::string tail = AuditErrorFrame(writable.message());
  EXPECT_EQ(stream.Finish(kOutcomeAuditUnavailable, &tail).code(), Status::Code::kUnavailable);
  EXPECT_NE(tail.find("\"code\":\"audit_unavailable\""), std::string::npos) << tail;
  const std::string received = "data: one\n\n" + tail;

  lock.Release();
  ASSERT_TRUE(audit::testing::Eventually([&] { return audit::testing::RecordsIn(f.dir.path()).size() == 2u; }));
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].outcome, "audit_unavailable");
  EXPECT_EQ(records[1].start_seq, static_cast<int64_t>(records[0].seq));
  EXPECT_EQ(records[1].response_sha256, audit::ToHex(audit::Sha256(received)));
}

TEST(StreamAuditTest, FinalFramesWhoseEndCannotBeCommittedBecomeTheErrorFrame) {
  Fixture f(AuditPolicy{}, FastFailingOptions);
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  stream.Sent("data: one\n\n");
  audit::testing::DatabaseWriteLock lock(f.dir.path() + "/audit.db");
  std::string tail = "data: [DONE]\n\n";
  EXPECT_EQ(stream.Finish(kOutcomeCompleted, &tail).code(), Status::Code::kUnavailable);
  EXPECT_EQ(tail.find("[DONE]"), std::string::npos);
  EXPECT_NE(tail.find("audit_unavailable"), std::string::npos);
  lock.Release();
  ASSERT_TRUE(audit::testing::Eventually([&] { return audit::testing::RecordsIn(f.dir.path()).size() == 2u; }));
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  EXPECT_EQ(records[1].outcome, "audit_unavailable");
  EXPECT_EQ(records[1].response_sha256, audit::ToHex(audit::Sha256("data: one\n\n" + tail)));
}

TEST(RecordingSinkTest, NotesFirstEventUsageAndKeptText) {
  struct Collect : api::EventSink {
    int events = 0;
    bool Emit(const api::StreamEvent&) override { return ++events > 0; }
  } next;
  GenerationTally tally;
  tally.keep_completion_text = true;
  AuditFacts facts;
  RecordingSink sink(next, std::chrono::steady_clock::now() - std::chrono::milliseconds(5), &tally, &facts);
  EXPECT_TRUE(sink.Emit(Answer("a")));
  EXPECT_TRUE(sink.Emit(Finish(4, 1)));
  EXPECT_EQ(next.events, 2);
  EXPECT_GE(facts.ttft_us, 5000);
  EXPECT_EQ(facts.prompt_tokens, 4);
  EXPECT_EQ(facts.completion_tokens, 1);
  EXPECT_EQ(facts.completion_text, "a");
}

TEST(RecordingSinkTest, BeforeTheFinishTheCountsAreTheEstimatedPromptAndOnePerDelta) {
  struct Collect : api::EventSink {
    bool Emit(const api::StreamEvent&) override { return true; }
  } next;
  GenerationTally tally;
  tally.estimated_prompt_tokens = 25;
  AuditFacts facts;
  RecordingSink sink(next, std::chrono::steady_clock::now(), &tally, &facts);
  EXPECT_FALSE(tally.generated);
  api::StreamEvent call;
  call.kind = api::StreamEventKind::kToolCallBegin;  // carries no text: no token counted
  sink.Emit(call);
  sink.Emit(Answer("a"));
  sink.Emit(Answer("bc"));
  EXPECT_TRUE(tally.generated);
  EXPECT_FALSE(tally.usage_reported);
  EXPECT_EQ(facts.prompt_tokens, 25);
  EXPECT_EQ(facts.completion_tokens, 2);
  sink.Emit(Finish(30, 9));  // the backend's own counts replace the estimate
  EXPECT_TRUE(tally.usage_reported);
  EXPECT_EQ(facts.prompt_tokens, 30);
  EXPECT_EQ(facts.completion_tokens, 9);
}

TEST(RecordingSinkTest, EventsThatCountTheirTokensAreCountedByThem) {
  struct Collect : api::EventSink {
    bool Emit(const api::StreamEvent&) override { return true; }
  } next;
  GenerationTally tally;
  AuditFacts facts;
  RecordingSink sink(next, std::chrono::steady_clock::now(), &tally, &facts);
  api::StreamEvent two = Answer("ab");
  two.tokens = 2;
  api::StreamEvent same = Answer("c");
  same.tokens = 0;  // text released by the previous event's token
  sink.Emit(two);
  sink.Emit(same);
  EXPECT_EQ(facts.completion_tokens, 2);
  sink.Emit(Finish(4, 2));
  EXPECT_EQ(facts.completion_tokens, 2);
}

TEST(StreamAuditTest, WithFailClosedOffTheFinalFramesGoOutAndTheirEndIsWrittenLater) {
  AuditPolicy open;
  open.fail_closed = false;
  Fixture f(open, FastFailingOptions);
  RequestContext ctx = ModelRequest();
  StreamAudit stream(ctx.audit, GenerationTally{}, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  stream.Sent("data: one\n\n");
  audit::testing::DatabaseWriteLock lock(f.dir.path() + "/audit.db");
  EXPECT_FALSE(f.sink->Record(audit::testing::SampleRecord(1)).WaitCommitted().ok());
  EXPECT_TRUE(stream.CheckWritable().ok());  // the stream goes on
  std::string tail = "data: [DONE]\n\n";
  EXPECT_TRUE(stream.Finish(kOutcomeCompleted, &tail).ok());
  EXPECT_EQ(tail, "data: [DONE]\n\n");
  lock.Release();
  ASSERT_TRUE(audit::testing::Eventually([&] { return audit::testing::RecordsIn(f.dir.path()).size() == 2u; }));
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  EXPECT_EQ(records[1].outcome, "ok");
  EXPECT_EQ(records[1].response_sha256, audit::ToHex(audit::Sha256("data: one\n\ndata: [DONE]\n\n")));
}

TEST(StreamAuditTest, AStreamCutShortIsRecordedWithWhatItGenerated) {
  Fixture f;
  RequestContext ctx = ModelRequest();
  GenerationTally tally;
  tally.estimated_prompt_tokens = 12;
  StreamAudit stream(ctx.audit, tally, ctx.start);
  ASSERT_TRUE(stream.Start(&f.auditor, f.auditor.RecordOf(StreamExchange(ctx))).ok());
  for (const char* piece : {"a", "b", "c"}) stream.NoteEvent(Answer(piece));
  ASSERT_TRUE(stream.Finish(kOutcomeClientDisconnected, nullptr).ok());
  ASSERT_TRUE(f.sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(f.dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].prompt_tokens, 12);
  EXPECT_EQ(records[1].completion_tokens, 3);
}

}  // namespace
}  // namespace kimi::http
