#include "audit/record_builder.h"

#include <utility>

namespace kimi::audit {

std::string OutcomeOfStatus(const Status& status) {
  if (status.ok()) return "ok";
  switch (status.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
    case Status::Code::kAlreadyExists:
    case Status::Code::kPermissionDenied:
    case Status::Code::kFailedPrecondition:
    case Status::Code::kCorruption:
      return "refused";
    default:
      return "error";
  }
}

AuditRecord RecordBuilder::Of(const Actor& actor, std::string_view action) {
  AuditRecord r;
  r.actor = actor.name;
  r.role = actor.role;
  r.source = actor.source;
  r.request_id = actor.request_id;
  r.client_request_id = actor.client_request_id;
  r.action = std::string(action);
  return r;
}

RecordBuilder RecordBuilder::ApiRequest(const Actor& actor, std::string_view route) {
  return RecordBuilder(Of(actor, "http." + std::string(route)));
}

RecordBuilder RecordBuilder::StreamStart(AuditRecord request, int64_t prompt_tokens) {
  request.outcome = std::string(kOutcomeStreamStarted);
  request.prompt_tokens = prompt_tokens;
  request.completion_tokens = 0;
  request.response_sha256.clear();
  return RecordBuilder(std::move(request));
}

RecordBuilder RecordBuilder::StreamEnd(const AuditRecord& start, std::optional<uint64_t> start_seq) {
  AuditRecord end =
      Of(Actor{start.actor, start.role, start.source, start.request_id, start.client_request_id}, start.action);
  end.target = start.target;
  end.model = start.model;
  end.model_digest = start.model_digest;
  end.backend = start.backend;
  end.route_decision = start.route_decision;
  end.attempts = start.attempts;
  end.policy = start.policy;
  end.request_sha256 = start.request_sha256;
  end.http_status = start.http_status;
  end.start_seq = start_seq ? static_cast<int64_t>(*start_seq) : kNoStartSeq;
  return RecordBuilder(std::move(end));
}

RecordBuilder RecordBuilder::AdminAction(const Actor& actor, std::string_view action, std::string_view target) {
  AuditRecord r = Of(actor, action);
  r.target = std::string(target);
  r.outcome = "ok";
  return RecordBuilder(std::move(r));
}

RecordBuilder RecordBuilder::ServiceEvent(std::string_view action, std::string detail) {
  AuditRecord r = Of(Actor{std::string(kDaemonActor), std::string(kSystemRole), "", "", ""}, action);
  r.outcome = "ok";
  r.detail = std::move(detail);
  return RecordBuilder(std::move(r));
}

RecordBuilder RecordBuilder::ModelEvent(const Actor& actor, std::string_view action, std::string_view target,
                                        const Status& outcome, std::string detail) {
  AuditRecord r = Of(actor, action);
  r.target = std::string(target);
  r.outcome = OutcomeOfStatus(outcome);
  if (!outcome.ok()) detail += (detail.empty() ? "" : ": ") + outcome.message();
  r.detail = std::move(detail);
  return RecordBuilder(std::move(r));
}

RecordBuilder& RecordBuilder::Time(int64_t unix_ms) {
  record_.time_ms = unix_ms;
  return *this;
}

RecordBuilder& RecordBuilder::Target(std::string target) {
  record_.target = std::move(target);
  return *this;
}

RecordBuilder& RecordBuilder::Outcome(std::string_view outcome) {
  record_.outcome = std::string(outcome);
  return *this;
}

RecordBuilder& RecordBuilder::HttpStatus(int64_t status) {
  record_.http_status = status;
  return *this;
}

RecordBuilder& RecordBuilder::Detail(std::string detail) {
  record_.detail = std::move(detail);
  return *this;
}

RecordBuilder& RecordBuilder::Model(std::string model, std::string digest) {
  record_.model = std::move(model);
  record_.model_digest = std::move(digest);
  return *this;
}

RecordBuilder& RecordBuilder::RequestHash(std::string sha256_hex) {
  record_.request_sha256 = std::move(sha256_hex);
  return *this;
}

RecordBuilder& RecordBuilder::ResponseHash(std::string sha256_hex) {
  record_.response_sha256 = std::move(sha256_hex);
  return *this;
}

RecordBuilder& RecordBuilder::Tokens(int64_t prompt, int64_t completion) {
  record_.prompt_tokens = prompt;
  record_.completion_tokens = completion;
  return *this;
}

RecordBuilder& RecordBuilder::Timing(int64_t ttft_us, int64_t total_us) {
  record_.ttft_us = ttft_us;
  record_.total_us = total_us;
  return *this;
}

RecordBuilder& RecordBuilder::Route(std::string backend, std::string decision, int64_t attempts) {
  record_.backend = std::move(backend);
  record_.route_decision = std::move(decision);
  record_.attempts = attempts;
  return *this;
}

RecordBuilder& RecordBuilder::Policy(std::vector<std::string> decisions) {
  record_.policy = std::move(decisions);
  return *this;
}

RecordBuilder& RecordBuilder::Content(std::optional<AuditContent> content) {
  record_.content = std::move(content);
  return *this;
}

}  // namespace kimi::audit
