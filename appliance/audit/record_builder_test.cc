#include "audit/record_builder.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace kimi::audit {
namespace {

const Actor kAlice{"alice", "admin", "10.0.0.5:51234", "req-1", "client-7"};

// A record of kAlice's with only the identity fields and `action` set.
AuditRecord ByAlice(std::string action) {
  AuditRecord r;
  r.actor = "alice";
  r.role = "admin";
  r.source = "10.0.0.5:51234";
  r.request_id = "req-1";
  r.client_request_id = "client-7";
  r.action = std::move(action);
  return r;
}

// A record with every field but seq, version, time and content_sha256 set to something
// distinct, for the kinds that start from another record.
AuditRecord FullRecord() {
  AuditRecord r;
  r.seq = 41;
  r.actor = "key_ab12";
  r.role = "user";
  r.source = "10.0.0.9:4000";
  r.request_id = "req-9";
  r.client_request_id = "mine-9";
  r.action = "http.chat_completions";
  r.target = "t";
  r.model = "kimi-k3";
  r.model_digest = "d1";
  r.outcome = "ok";
  r.http_status = 200;
  r.prompt_tokens = 12;
  r.completion_tokens = 34;
  r.ttft_us = 56;
  r.total_us = 78;
  r.policy = {"allow"};
  r.backend = "embedded";
  r.route_decision = "only candidate";
  r.attempts = 1;
  r.request_sha256 = "aa";
  r.response_sha256 = "bb";
  r.detail = "finish_reason stop";
  r.content = AuditContent{"prompt", "completion"};
  return r;
}

TEST(RecordBuilder, ApiRequestSetsTheActorAndTheRoutesAction) {
  EXPECT_EQ(RecordBuilder::ApiRequest(kAlice, "chat_completions").Build(), ByAlice("http.chat_completions"));
}

TEST(RecordBuilder, StreamStartIsTheRequestMarkedStartedWithoutWhatTheEndKnows) {
  AuditRecord want = FullRecord();
  want.outcome = "started";
  want.prompt_tokens = 9;
  want.completion_tokens = 0;
  want.response_sha256 = "";
  EXPECT_EQ(RecordBuilder::StreamStart(FullRecord(), 9).Build(), want);
}

TEST(RecordBuilder, StreamEndCarriesTheStartsIdentityAndLinksToIt) {
  // What the end knows itself is left for the caller: outcome, tokens, timings, response
  // hash, detail, content.
  AuditRecord want = FullRecord();
  want.seq = 0;
  want.outcome = "";
  want.prompt_tokens = 0;
  want.completion_tokens = 0;
  want.ttft_us = 0;
  want.total_us = 0;
  want.response_sha256 = "";
  want.detail = "";
  want.content.reset();
  want.start_seq = 41;
  EXPECT_EQ(RecordBuilder::StreamEnd(FullRecord(), 41).Build(), want);
  // A start that was never committed has no seq to point to.
  want.start_seq = kNoStartSeq;
  EXPECT_EQ(RecordBuilder::StreamEnd(FullRecord(), std::nullopt).Build(), want);
}

TEST(RecordBuilder, AdminActionIsOkUnlessTold) {
  AuditRecord want = ByAlice("policy.update");
  want.target = "policy/3";
  want.outcome = "ok";
  EXPECT_EQ(RecordBuilder::AdminAction(kAlice, "policy.update", "policy/3").Build(), want);
  want.outcome = "denied";
  EXPECT_EQ(RecordBuilder::AdminAction(kAlice, "policy.update", "policy/3").Outcome("denied").Build(), want);
}

TEST(RecordBuilder, ServiceEventNamesTheDaemonAndNoSource) {
  AuditRecord want;
  want.actor = "kimi-appliance";
  want.role = "system";
  want.action = "service.start";
  want.outcome = "ok";
  want.detail = "version 1";
  EXPECT_EQ(RecordBuilder::ServiceEvent("service.start", "version 1").Build(), want);
}

TEST(RecordBuilder, ServiceEventHashesToItsKnownBytes) {
  // The bytes a service start has always been signed with (docs/audit.md, version 4).
  AuditRecord r = RecordBuilder::ServiceEvent("service.start", "version 1").Time(1790000000123).Build();
  r.seq = 3;
  NormalizeRecord(&r);
  EXPECT_EQ(CanonicalRecordBytes(r),
            R"({"action":"service.start","actor":"kimi-appliance","attempts":0,"backend":"",)"
            R"("client_request_id":"","completion_tokens":0,"content_sha256":"","detail":"version 1",)"
            R"("http_status":0,"model":"","model_digest":"","outcome":"ok","policy":[],"prompt_tokens":0,)"
            R"("request_id":"","request_sha256":"","response_sha256":"","role":"system",)"
            R"("route_decision":"","seq":3,"source":"","start_seq":-1,"target":"",)"
            R"("time_ms":1790000000123,"total_us":0,"ttft_us":0,"v":4})");
}

TEST(RecordBuilder, ModelEventTakesItsOutcomeAndDetailFromAStatus) {
  AuditRecord want = ByAlice("model.activate");
  want.target = "k3";
  want.outcome = "ok";
  want.detail = "version 2";
  EXPECT_EQ(RecordBuilder::ModelEvent(kAlice, "model.activate", "k3", Status::OK(), "version 2").Build(), want);

  want.outcome = "refused";
  want.detail = "version 2: no such version";
  EXPECT_EQ(
      RecordBuilder::ModelEvent(kAlice, "model.activate", "k3", Status::NotFound("no such version"), "version 2")
          .Build(),
      want);

  want.outcome = "error";
  want.detail = "disk full";  // no detail of its own: the message alone
  EXPECT_EQ(RecordBuilder::ModelEvent(kAlice, "model.activate", "k3", Status::IOError("disk full"), "").Build(), want);
}

TEST(RecordBuilder, OutcomeOfStatusSortsRefusalsFromErrors) {
  EXPECT_EQ(OutcomeOfStatus(Status::OK()), "ok");
  for (const Status& refused : {Status::InvalidArgument("x"), Status::NotFound("x"), Status::AlreadyExists("x"),
                                Status::PermissionDenied("x"), Status::FailedPrecondition("x"),
                                Status::Corruption("x")}) {
    EXPECT_EQ(OutcomeOfStatus(refused), "refused") << refused.ToString();
  }
  for (const Status& error : {Status::IOError("x"), Status::Unavailable("x"), Status::Internal("x"),
                              Status::ResourceExhausted("x")}) {
    EXPECT_EQ(OutcomeOfStatus(error), "error") << error.ToString();
  }
}

TEST(RecordBuilder, EachSetterFillsItsFields) {
  const AuditRecord full = FullRecord();
  AuditRecord built = RecordBuilder::AdminAction(Actor{full.actor, full.role, full.source, full.request_id,
                                                       full.client_request_id},
                                                 full.action, "")
                          .Time(5)
                          .Target(full.target)
                          .Outcome(full.outcome)
                          .HttpStatus(full.http_status)
                          .Detail(full.detail)
                          .Model(full.model, full.model_digest)
                          .RequestHash(full.request_sha256)
                          .ResponseHash(full.response_sha256)
                          .Tokens(full.prompt_tokens, full.completion_tokens)
                          .Timing(full.ttft_us, full.total_us)
                          .Route(full.backend, full.route_decision, full.attempts)
                          .Policy(full.policy)
                          .Content(full.content)
                          .Build();
  built.seq = full.seq;
  EXPECT_EQ(built.time_ms, 5);
  built.time_ms = full.time_ms;
  EXPECT_EQ(built, full);
}

}  // namespace
}  // namespace kimi::audit
