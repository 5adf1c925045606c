#include "http/request_audit.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "audit/audit_sink.h"
#include "audit/hash.h"
#include "kimi/log.h"
#include "kimi/utc_time.h"

namespace kimi::http {
namespace {

std::string BodyDigest(std::string_view body) {
  return body.empty() ? std::string() : audit::ToHex(audit::Sha256(body));
}

// The target of an unmatched request: the method and the path (redacted by the caller; the sink
// bounds it, like every audited string, so a client cannot grow the log with long paths).
std::string TargetOf(std::string_view method, const std::string& path) {
  return std::string(method.empty() ? std::string_view("-") : method) + " " + path;
}

// What the budget allows, as a count's record says why it is one.
std::string BudgetText(const AnonymousRecordBudgetOptions& o) {
  std::string text;
  if (o.per_source_per_minute > 0) text = std::to_string(o.per_source_per_minute) + " a minute from one address";
  if (o.per_minute > 0) {
    text += (text.empty() ? "" : " or ") + std::to_string(o.per_minute) + " a minute from all addresses";
  }
  return text;
}

}  // namespace

std::string_view OutcomeOf(int http_status) {
  if (http_status < 400) return "ok";
  if (http_status == 499) return "client_disconnected";  // a whole response's client hung up
  if (http_status == 401 || http_status == 403) return "denied";
  if (http_status < 500) return "invalid";
  return "error";
}

bool RequestAuditor::Records(const RequestContext& ctx) const {
  if (sink_ == nullptr) return false;
  if (policy_.record_probes) return true;
  // Refused probes are recorded anyway: every authentication failure is audited.
  if (ctx.probe) return !ctx.auth_failure.empty();
  if (ctx.status_read) {
    // Someone who has not signed in asks: nothing was presented, so nothing was refused.
    if (ctx.no_credentials) return false;
    // The console's own polling: a signed-in session reading state, allowed. A session
    // refused for its role, and every call made with an API key, are recorded.
    const bool console_read =
        ctx.principal && ctx.principal->kind == auth::Principal::Kind::kSession && ctx.auth_failure.empty();
    return !console_read;
  }
  return true;
}

audit::AuditRecord RequestAuditor::RecordOf(const Exchange& e) const {
  const RequestContext& ctx = *e.ctx;
  const audit::Actor actor = AuditActorOf(ctx);
  const AuditFacts& f = ctx.audit;
  const int64_t total_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - ctx.start).count();
  audit::AuditRecord record =
      audit::RecordBuilder::ApiRequest(actor, ctx.route)
          .Target(ctx.route == "unmatched" ? TargetOf(e.method, ClientText(e.path)) : std::string())
          .Outcome(OutcomeOf(e.status))
          .HttpStatus(e.status)
          .Detail(ctx.auth_failure)
          .RequestHash(ctx.body_has_password ? std::string() : BodyDigest(e.request_body))
          .ResponseHash(f.response_sha256.empty() ? BodyDigest(e.response_body) : f.response_sha256)
          .Model(f.model, f.model_digest)
          .Route(f.backend, f.route_decision, f.attempts)
          .Tokens(f.prompt_tokens, f.completion_tokens)
          .Timing(f.ttft_us, total_us)
          .Policy(f.policy)
          .Build();
  std::optional<audit::AuditContent> content;
  if (!ctx.body_has_password && !f.model.empty()) {
    content = f.stored_content ? f.stored_content(e.request_body, f.completion_text)
                               : audit::AuditContent{std::string(e.request_body), f.completion_text};
  }
  audit::ApplyContentPolicy(f.stored_content ? audit::AuditContentPolicy{true} : policy_.content, std::move(content),
                            &record);
  return record;
}

Result<uint64_t> RequestAuditor::TryCommit(audit::AuditRecord record) const {
  if (sink_ == nullptr) return uint64_t{0};
  const audit::Ticket ticket = sink_->Record(std::move(record));
  KIMI_RETURN_IF_ERROR(ticket.WaitCommitted());
  return ticket.seq();
}

void RequestAuditor::CommitWhenWritable(audit::AuditRecord record) const {
  if (sink_ != nullptr) sink_->RecordWhenWritable(std::move(record));
}

Status RequestAuditor::CommitRecord(audit::AuditRecord record, std::string_view request_id) const {
  Result<uint64_t> committed = TryCommit(std::move(record));
  return committed.ok() ? Status::OK() : Uncommitted(committed.status(), request_id);
}

Status RequestAuditor::Uncommitted(const Status& committed, std::string_view request_id) const {
  std::string reason = sink_ == nullptr ? std::string() : sink_->Reason();
  if (reason.empty()) reason = committed.message();
  if (!policy_.fail_closed) {
    log::Error("request served without its audit record (audit.fail_closed is off)",
               {{"request_id", std::string(request_id)}, {"error", reason}});
    return Status::OK();
  }
  log::Warn("request refused: its audit record was not committed",
            {{"request_id", std::string(request_id)}, {"error", reason}});
  return Status::Unavailable(reason);
}

Status RequestAuditor::CheckWritable() const {
  if (sink_ == nullptr || !policy_.fail_closed || sink_->Healthy()) return Status::OK();
  return Status::Unavailable(sink_->Reason());
}

Status RequestAuditor::Commit(const Exchange& e) const {
  if (sink_ == nullptr) return Status::OK();
  const int64_t now_ms = UnixMillisNow();
  RecordCounted(anonymous_->TakeDue(now_ms));
  if (!Records(*e.ctx)) return Status::OK();
  if (!e.ctx->principal && !anonymous_->Admit(e.ctx->remote_addr, e.status, now_ms)) {
    return CheckWritable();  // counted: in the log once its count is written
  }
  return CommitRecord(RecordOf(e), e.ctx->request_id);
}

std::string RequestAuditor::ClientText(std::string_view text) const {
  return policy_.shown_client_text && !text.empty() ? policy_.shown_client_text(text) : std::string(text);
}

void RequestAuditor::StartCountFlusher() {
  if (sink_ == nullptr || flusher_.joinable()) return;
  const auto period = std::chrono::milliseconds(std::max<int64_t>(10, policy_.anonymous.window_ms / 4));
  flusher_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(flusher_mu_);
    while (!flusher_cv_.wait_for(lock, period, [this] { return flusher_stopping_; })) {
      lock.unlock();
      RecordCounted(anonymous_->TakeDue(UnixMillisNow()));
      lock.lock();
    }
  });
}

void RequestAuditor::StopCountFlusher() {
  {
    std::lock_guard<std::mutex> lock(flusher_mu_);
    flusher_stopping_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
}

void RequestAuditor::RecordAllCounted() const {
  if (sink_ != nullptr) RecordCounted(anonymous_->TakeAll());
}

void RequestAuditor::RecordCounted(const std::vector<CountedRequests>& counts) const {
  for (const CountedRequests& c : counts) {
    audit::Actor actor;
    actor.source = c.source;
    const std::string status = std::to_string(c.http_status);
    CommitWhenWritable(
        audit::RecordBuilder::ApiRequest(actor, "requests_counted")
            .Target(status)
            .Outcome(OutcomeOf(c.http_status))
            .HttpStatus(c.http_status)
            .Detail(std::to_string(c.count) + " requests without a principal" +
                    (c.source == kManySources ? " from many addresses" : "") + " answered " + status + " from " +
                    audit::FormatUtcMillis(c.first_ms) + " to " + audit::FormatUtcMillis(c.last_ms) +
                    ", counted here rather than recorded one by one: more than " + BudgetText(policy_.anonymous))
            .Build());
  }
}

audit::Actor AuditActorOf(const RequestContext& ctx) {
  audit::Actor actor;
  actor.source = ctx.remote_addr;
  actor.request_id = ctx.request_id;
  actor.client_request_id = ctx.client_request_id;  // bounded and escaped by the sink
  if (ctx.principal) {
    actor.name = ctx.principal->id;  // a key id or a user name, never a secret
    actor.role = std::string(auth::RoleName(ctx.principal->role));
  }
  return actor;
}

}  // namespace kimi::http
