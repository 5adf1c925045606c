#include "http/request_audit.h"

#include <gtest/gtest.h>

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

std::vector<audit::AuditRecord> ReadBack(const std::string& dir) {
  std::vector<audit::AuditRecord> out;
  audit::AuditStoreOptions read_only;
  read_only.read_only = true;
  Result<std::unique_ptr<audit::AuditStore>> store = audit::AuditStore::Open(dir + "/audit.db", read_only);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return out;
  Status s = (*store)->ScanRecords(audit::RecordQuery{}, [&](audit::StoredRecord& r) {
    out.push_back(r.record);
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
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

  std::vector<audit::AuditRecord> records = ReadBack(dir.path());
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
  std::vector<audit::AuditRecord> records = ReadBack(dir.path());
  ASSERT_EQ(records.size(), 1u);
  const audit::AuditRecord& r = records[0];
  EXPECT_LE(r.client_request_id.size(), audit::kMaxAuditTextBytes);
  EXPECT_LE(r.target.size(), audit::kMaxAuditTextBytes);
  EXPECT_LE(r.detail.size(), audit::kMaxAuditDetailBytes);
  EXPECT_EQ(r.target.rfind("GET /ppp", 0), 0u);
  EXPECT_NE(r.detail.find("[truncated, "), std::string::npos);
  EXPECT_LT(audit::CanonicalRecordBytes(r).size(), 8u * 1024);
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
  std::vector<audit::AuditRecord> records = ReadBack(dir.path());
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
