#include "http/request_audit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/audit_text.h"
#include "audit/hash.h"
#include "audit/test_util.h"

namespace kimi::http {
namespace {

TEST(RequestAuditTest, OutcomeFollowsTheStatus) {
  EXPECT_EQ(OutcomeOf(200), "ok");
  EXPECT_EQ(OutcomeOf(304), "ok");
  EXPECT_EQ(OutcomeOf(401), "denied");
  EXPECT_EQ(OutcomeOf(403), "denied");
  EXPECT_EQ(OutcomeOf(404), "invalid");
  EXPECT_EQ(OutcomeOf(431), "invalid");
  EXPECT_EQ(OutcomeOf(503), "error");
}

AuditPolicy Policy(bool fail_closed, bool record_probes) {
  AuditPolicy p;
  p.fail_closed = fail_closed;
  p.record_probes = record_probes;
  return p;
}

RequestContext Context(std::string route, bool probe) {
  RequestContext ctx;
  ctx.request_id = "req-1";
  ctx.remote_addr = "127.0.0.1:4000";
  ctx.start = std::chrono::steady_clock::now();
  ctx.route = std::move(route);
  ctx.probe = probe;
  return ctx;
}

std::unique_ptr<audit::AuditSink> OpenSink(const std::string& dir) {
  audit::AuditSinkOptions options;
  options.data_dir = dir;
  Result<std::unique_ptr<audit::AuditSink>> sink = audit::AuditSink::Open(options);
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  return sink.ok() ? std::move(sink).value() : nullptr;
}

TEST(RequestAuditTest, CommitWritesOneRecordWithTheExchange) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor auditor(AuditPolicy{}, sink.get());
  RequestContext ctx = Context("unmatched", false);
  ctx.client_request_id = "client-7";
  ASSERT_TRUE(auditor.Commit(Exchange{&ctx, "POST", "/v1/x", 404, "hello", R"({"error":{}})"}).ok());
  ASSERT_TRUE(sink->Close().ok());

  std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(records.size(), 1u);
  const audit::AuditRecord& r = records[0];
  EXPECT_EQ(r.request_id, "req-1");
  EXPECT_EQ(r.client_request_id, "client-7");
  EXPECT_EQ(r.source, "127.0.0.1:4000");
  EXPECT_EQ(r.action, "http.unmatched");
  EXPECT_EQ(r.target, "POST /v1/x");
  EXPECT_EQ(r.outcome, "invalid");
  EXPECT_EQ(r.http_status, 404);
  EXPECT_GT(r.time_ms, 0);
  EXPECT_EQ(r.request_sha256, audit::ToHex(audit::Sha256("hello")));
  EXPECT_EQ(r.response_sha256, audit::ToHex(audit::Sha256(R"({"error":{}})")));
}

// An anonymous request whose path, X-Request-Id and refusal reason are huge still adds one
// small record: the sink bounds whatever the HTTP layer copies in.
TEST(RequestAuditTest, AHugeRequestGivesABoundedRecord) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor auditor(AuditPolicy{}, sink.get());
  RequestContext ctx = Context("unmatched", false);
  ctx.client_request_id = std::string(8000, 'i');
  ctx.auth_failure = "authentication failed: unknown user " + std::string(7 * 1024 * 1024, 'u');
  const std::string path = "/" + std::string(1024 * 1024, 'p');
  ASSERT_TRUE(auditor.Commit(Exchange{&ctx, "GET", path, 401, "", ""}).ok());
  ASSERT_TRUE(sink->Close().ok());
  std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(records.size(), 1u);
  const audit::AuditRecord& r = records[0];
  EXPECT_LE(r.client_request_id.size(), audit::kMaxAuditTextBytes);
  EXPECT_LE(r.target.size(), audit::kMaxAuditTextBytes);
  EXPECT_LE(r.detail.size(), audit::kMaxAuditDetailBytes);
  EXPECT_EQ(r.target.rfind("GET /ppp", 0), 0u);
  EXPECT_NE(r.detail.find("[truncated, "), std::string::npos);
  EXPECT_LT(audit::CanonicalRecordBytes(r).size(), 8u * 1024);
}

// A count is written when its window has passed even when no request follows: the flusher writes
// it (a kill in a quiet spell after a flood lost every count that waited for the next request).
TEST(RequestAuditTest, TheFlusherWritesACountWithoutAnotherRequest) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  AuditPolicy policy;
  policy.anonymous.per_source_per_minute = 1;
  policy.anonymous.per_minute = 0;
  policy.anonymous.window_ms = 50;
  RequestAuditor auditor(policy, sink.get());
  auditor.StartCountFlusher();
  RequestContext anonymous = Context("unmatched", false);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(auditor.Commit(Exchange{&anonymous, "GET", "/x", 401, "", ""}).ok());
  ASSERT_TRUE(audit::testing::Eventually([&] { return sink->TreeSize() == 2; }));
  auditor.StopCountFlusher();
  ASSERT_TRUE(sink->Close().ok());
  const std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].action, "http.requests_counted");
  EXPECT_EQ(records[1].detail.rfind("3 requests", 0), 0u) << records[1].detail;
}

// Requests without a principal: `per_source` records a minute from one address, no bound for
// all of them together.
AuditPolicy AnonymousBudget(int64_t per_source, int64_t window_ms) {
  AuditPolicy policy;
  policy.anonymous.per_source_per_minute = per_source;
  policy.anonymous.per_minute = 0;
  policy.anonymous.window_ms = window_ms;
  return policy;
}

// A client without a credential cannot grow the log by one record per request: past the
// budget its requests are counted, and the count is in the log (every request accounted for);
// requests with a principal are recorded one by one whatever the budget.
TEST(RequestAuditTest, RequestsWithoutAPrincipalPastTheBudgetAreCounted) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor auditor(AnonymousBudget(5, 10'000), sink.get());
  RequestContext anonymous = Context("chat_completions", false);
  anonymous.auth_failure = "authentication failed";
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(auditor.Commit(Exchange{&anonymous, "POST", "/v1/chat/completions", 401, "{}", "{}"}).ok());
  }
  RequestContext keyed = Context("chat_completions", false);
  keyed.principal = auth::Principal{};
  keyed.principal->id = "key_1";
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(auditor.Commit(Exchange{&keyed, "POST", "/v1/chat/completions", 400, "{}", "{}"}).ok());
  }
  auditor.RecordAllCounted();
  ASSERT_TRUE(sink->Close().ok());

  std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  int64_t one_by_one = 0, keyed_records = 0;
  std::vector<audit::AuditRecord> counts;
  for (const audit::AuditRecord& r : records) {
    if (r.action == "http.requests_counted") counts.push_back(r);
    else if (r.actor == "key_1") ++keyed_records;
    else ++one_by_one;
  }
  EXPECT_EQ(one_by_one, 5);
  EXPECT_EQ(keyed_records, 20);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].source, "127.0.0.1");
  EXPECT_EQ(counts[0].http_status, 401);
  EXPECT_EQ(counts[0].outcome, "denied");
  EXPECT_EQ(counts[0].detail.rfind("195 requests without a principal answered 401 from ", 0), 0u) << counts[0].detail;
  EXPECT_NE(counts[0].detail.find("more than 5 a minute from one address"), std::string::npos) << counts[0].detail;
}

// A count is written once its window has passed, by whichever exchange is committed next.
TEST(RequestAuditTest, ACountIsWrittenOnceItsWindowHasPassed) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor auditor(AnonymousBudget(1, 50), sink.get());
  RequestContext anonymous = Context("unmatched", false);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(auditor.Commit(Exchange{&anonymous, "GET", "/x", 401, "", ""}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  RequestContext probe = Context("healthz", true);  // not recorded itself
  ASSERT_TRUE(auditor.Commit(Exchange{&probe, "GET", "/healthz", 200, "", "{}"}).ok());
  ASSERT_TRUE(sink->Close().ok());
  std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].action, "http.requests_counted");
  EXPECT_EQ(records[1].detail.rfind("2 requests", 0), 0u) << records[1].detail;
}

TEST(RequestAuditTest, ProbesAreSkippedUnlessAsked) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor skip(Policy(true, false), sink.get());
  RequestAuditor keep(Policy(true, true), sink.get());
  RequestContext ctx = Context("healthz", true);
  ASSERT_TRUE(skip.Commit(Exchange{&ctx, "GET", "/healthz", 200, "", "{}"}).ok());
  ASSERT_TRUE(keep.Commit(Exchange{&ctx, "GET", "/healthz", 200, "", "{}"}).ok());
  ASSERT_TRUE(sink->Close().ok());
  std::vector<audit::AuditRecord> records = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].action, "http.healthz");
  EXPECT_EQ(records[0].target, "");
}

// The console's polling of status reads is not recorded; the same reads with an API key, a
// session refused for its role and a presented credential that fails are (docs/audit.md).
TEST(RequestAuditTest, StatusReadsOfTheConsoleAreNotRecordedButApiCallsAndDenialsAre) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  RequestAuditor auditor(Policy(true, false), sink.get());
  RequestAuditor everything(Policy(true, true), sink.get());
  auto principal = [](auth::Principal::Kind kind) {
    auth::Principal p;
    p.kind = kind;
    p.id = kind == auth::Principal::Kind::kSession ? "admin" : "key_1";
    return p;
  };
  RequestContext session_read = Context("models", false);
  session_read.status_read = true;
  session_read.principal = principal(auth::Principal::Kind::kSession);
  EXPECT_FALSE(auditor.Records(session_read));
  EXPECT_TRUE(everything.Records(session_read));

  RequestContext anonymous = Context("admin_session_get", false);
  anonymous.status_read = true;
  anonymous.no_credentials = true;
  anonymous.auth_failure = "authentication failed: no credentials";
  EXPECT_FALSE(auditor.Records(anonymous));

  RequestContext key_read = session_read;
  key_read.principal = principal(auth::Principal::Kind::kApiKey);
  EXPECT_TRUE(auditor.Records(key_read));

  RequestContext lacking_role = session_read;
  lacking_role.auth_failure = "forbidden: the role may not";
  EXPECT_TRUE(auditor.Records(lacking_role));

  RequestContext bad_key = Context("models", false);
  bad_key.status_read = true;
  bad_key.auth_failure = "authentication failed: unknown key";
  EXPECT_TRUE(auditor.Records(bad_key));

  // Any route that is not a status read keeps its record, a session's or not.
  RequestContext write = Context("admin_keys_create", false);
  write.principal = principal(auth::Principal::Kind::kSession);
  EXPECT_TRUE(auditor.Records(write));
  RequestContext anonymous_write = Context("admin_keys_create", false);
  anonymous_write.no_credentials = true;
  anonymous_write.auth_failure = "authentication failed: no credentials";
  EXPECT_TRUE(auditor.Records(anonymous_write));
  ASSERT_TRUE(sink->Close().ok());
}

TEST(RequestAuditTest, UncommittedRecordFailsClosedOrIsLoggedWhenOpen) {
  audit::testing::TempDir dir;
  std::unique_ptr<audit::AuditSink> sink = OpenSink(dir.path());
  ASSERT_NE(sink, nullptr);
  ASSERT_TRUE(sink->Close().ok());  // a closed sink completes every ticket with Unavailable
  RequestContext ctx = Context("unmatched", false);
  Exchange e{&ctx, "GET", "/x", 404, "", "{}"};

  RequestAuditor closed(Policy(true, false), sink.get());
  Status s = closed.Commit(e);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_FALSE(s.message().empty());

  RequestAuditor open(Policy(false, false), sink.get());
  EXPECT_TRUE(open.Commit(e).ok());
}

}  // namespace
}  // namespace kimi::http
