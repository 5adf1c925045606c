#include "http/generation_audit.h"

#include "http/request_audit.h"

namespace kimi::http {
namespace {

int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void NoteGenerationEvent(const api::StreamEvent& event, std::chrono::steady_clock::time_point start,
                         AuditFacts* facts) {
  if (facts->ttft_us == 0) facts->ttft_us = MicrosSince(start);
  facts->generated = true;
  if (event.kind == api::StreamEventKind::kFinish) {
    facts->prompt_tokens = event.usage.prompt_tokens;
    facts->completion_tokens = event.usage.completion_tokens;
    facts->usage_reported = true;
    return;
  }
  if (!facts->usage_reported) {
    // The prompt was consumed once anything came back; each text delta is at least a token.
    facts->prompt_tokens = facts->estimated_prompt_tokens;
    if (!event.text.empty()) ++facts->completion_tokens;
  }
  if (event.kind == api::StreamEventKind::kAnswer && facts->keep_completion_text) facts->completion_text += event.text;
}

void NoteBackendOutcome(const api::BackendOutcome& outcome, AuditFacts* facts) {
  if (!outcome.backend.empty()) facts->backend = outcome.backend;
  if (!outcome.decision.empty()) facts->route_decision = outcome.decision;
  if (outcome.attempts > 0) facts->attempts = outcome.attempts;
  // The version the backend served with, never the one that was active when the request came in.
  if (!outcome.model_digest.empty()) facts->model_digest = outcome.model_digest;
}

bool RecordingSink::Emit(const api::StreamEvent& event) {
  NoteGenerationEvent(event, start_, facts_);
  return next_.Emit(event);
}

void StreamAudit::Arm(const RequestAuditor* auditor, audit::AuditRecord record) {
  auditor_ = auditor;
  record_ = std::move(record);
}

Status StreamAudit::Finish(std::string_view outcome, std::string_view final_bytes) {
  if (finished_) return Status::OK();
  finished_ = true;
  sent_.Update(final_bytes);
  if (auditor_ == nullptr) return Status::OK();
  record_.outcome = std::string(outcome);
  record_.total_us = MicrosSince(start_);
  record_.response_sha256 = audit::ToHex(sent_.Finish());
  record_.ttft_us = facts_.ttft_us;
  record_.prompt_tokens = facts_.prompt_tokens;
  record_.completion_tokens = facts_.completion_tokens;
  record_.model_digest = facts_.model_digest;
  record_.backend = facts_.backend;
  record_.route_decision = facts_.route_decision;
  record_.attempts = facts_.attempts;
  record_.policy = facts_.policy;
  if (record_.content.has_value()) {
    if (!facts_.stored_content) {
      record_.content->completion = facts_.completion_text;
    } else if (std::optional<audit::AuditContent> kept = facts_.stored_content({}, facts_.completion_text)) {
      record_.content->completion = std::move(kept->completion);
    }
  }
  const std::string request_id = record_.request_id;
  return auditor_->CommitRecord(std::move(record_), request_id);
}

}  // namespace kimi::http
