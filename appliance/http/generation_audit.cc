#include "http/generation_audit.h"

#include "audit/record_builder.h"
#include "http/error_response.h"
#include "http/request_audit.h"

namespace kimi::http {
namespace {

int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void NoteGenerationEvent(const api::StreamEvent& event, std::chrono::steady_clock::time_point start,
                         GenerationTally* tally, AuditFacts* facts) {
  if (facts->ttft_us == 0) facts->ttft_us = MicrosSince(start);
  tally->generated = true;
  if (event.kind == api::StreamEventKind::kFinish) {
    facts->prompt_tokens = event.usage.prompt_tokens;
    facts->completion_tokens = event.usage.completion_tokens;
    tally->usage_reported = true;
    facts->finish_reason = event.finish_reason;
    return;
  }
  if (event.tokens >= 0) tally->counted_completion_tokens += event.tokens;
  else if (!event.text.empty()) ++tally->counted_completion_tokens;
  if (!tally->usage_reported) {
    // The prompt was consumed once anything came back: the backend's count when it gives one
    // before the end (the embedded engine does), else the admission estimate.
    facts->prompt_tokens = event.usage.prompt_tokens > 0 ? event.usage.prompt_tokens : tally->estimated_prompt_tokens;
    facts->completion_tokens = tally->counted_completion_tokens;
  }
  if (event.kind == api::StreamEventKind::kAnswer && tally->keep_completion_text) facts->completion_text += event.text;
}

void NoteBackendOutcome(const api::BackendOutcome& outcome, AuditFacts* facts) {
  if (!outcome.backend.empty()) facts->backend = outcome.backend;
  if (!outcome.decision.empty()) facts->route_decision = outcome.decision;
  if (outcome.attempts > 0) facts->attempts = outcome.attempts;
  // The version the backend served with, never the one that was active when the request came in.
  if (!outcome.model_digest.empty()) facts->model_digest = outcome.model_digest;
}

bool RecordingSink::Emit(const api::StreamEvent& event) {
  NoteGenerationEvent(event, start_, tally_, facts_);
  return next_.Emit(event);
}

std::string AuditErrorFrame(std::string_view reason) {
  return RenderErrorFrame(AuditUnavailable(reason));
}

Status StreamAudit::Start(const RequestAuditor* auditor, audit::AuditRecord record) {
  auditor_ = auditor;
  // The count noted with the first event (the backend's, or the admission estimate when it
  // gives none before its finish event).
  record = audit::RecordBuilder::StreamStart(
               std::move(record), facts_.prompt_tokens > 0 ? facts_.prompt_tokens : tally_.estimated_prompt_tokens)
               .Build();
  start_record_ = record;
  Result<uint64_t> committed = auditor_->TryCommit(std::move(record));
  if (committed.ok()) {
    start_seq_ = *committed;
    start_record_.seq = *committed;
    return Status::OK();
  }
  return auditor_->Uncommitted(committed.status(), start_record_.request_id);
}

Status StreamAudit::CheckWritable() const {
  return auditor_ == nullptr ? Status::OK() : auditor_->CheckWritable();
}

audit::AuditRecord StreamAudit::EndRecord(std::string_view outcome, std::string_view tail) const {
  // A start that was not committed (audit.fail_closed off) has no seq to point to.
  audit::AuditRecord end =
      audit::RecordBuilder::StreamEnd(start_record_, start_seq_)
          .Outcome(outcome)
          .Timing(facts_.ttft_us, MicrosSince(start_))
          .ResponseHash(audit::ToHex(sent_.DigestWith(tail)))
          .Tokens(facts_.prompt_tokens, facts_.completion_tokens)
          .Model(start_record_.model, facts_.model_digest)
          .Route(facts_.backend, facts_.route_decision, facts_.attempts)
          .Policy(facts_.policy)
          .Detail(facts_.finish_reason.empty() ? std::string() : "finish_reason " + facts_.finish_reason)
          .Build();
  // The start record holds the prompt; the end record the answer.
  if (start_record_.content.has_value()) {
    end.content = audit::AuditContent{};
    if (!facts_.stored_content) {
      end.content->completion = facts_.completion_text;
    } else if (std::optional<audit::AuditContent> kept = facts_.stored_content({}, facts_.completion_text)) {
      end.content->completion = std::move(kept->completion);
    }
  }
  return end;
}

Status StreamAudit::Finish(std::string_view outcome, std::string* final_bytes) {
  if (finished_) return Status::OK();
  finished_ = true;
  if (auditor_ == nullptr) {
    if (final_bytes != nullptr) sent_.Update(*final_bytes);
    return Status::OK();
  }
  const std::string& request_id = start_record_.request_id;
  const std::string_view tail = final_bytes == nullptr ? std::string_view() : std::string_view(*final_bytes);
  // A store known to fail is not tried: the batch would only fail after its busy timeout.
  Status committed = auditor_->CheckWritable();
  if (committed.ok()) committed = auditor_->TryCommit(EndRecord(outcome, tail)).status();
  if (committed.ok()) {
    sent_.Update(tail);
    return Status::OK();
  }
  Status refused = auditor_->Uncommitted(committed, request_id);
  std::string_view ended = outcome;
  if (!refused.ok() && final_bytes != nullptr) {
    // Fail-closed: the final frames do not go out without their record; the error frame does.
    *final_bytes = AuditErrorFrame(refused.message());
    ended = kOutcomeAuditUnavailable;
  }
  const std::string_view sent = final_bytes == nullptr ? std::string_view() : std::string_view(*final_bytes);
  auditor_->CommitWhenWritable(EndRecord(ended, sent));
  sent_.Update(sent);
  return refused;
}

}  // namespace kimi::http
