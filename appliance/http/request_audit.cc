#include "http/request_audit.h"

#include <chrono>
#include <string>

#include "audit/audit_sink.h"
#include "audit/hash.h"
#include "kimi/log.h"

namespace kimi::http {
namespace {

std::string BodyDigest(std::string_view body) {
  return body.empty() ? std::string() : audit::ToHex(audit::Sha256(body));
}

// The target of an unmatched request: the method and path as sent, capped so that a client
// cannot grow the log with long paths.
std::string TargetOf(const Exchange& e) {
  constexpr size_t kMaxPath = 256;
  std::string target = std::string(e.method.empty() ? std::string_view("-") : e.method) + " " +
                       std::string(e.path.substr(0, kMaxPath));
  if (e.path.size() > kMaxPath) target += "...";
  return target;
}

}  // namespace

std::string_view OutcomeOf(int http_status) {
  if (http_status < 400) return "ok";
  if (http_status == 401 || http_status == 403) return "denied";
  if (http_status < 500) return "invalid";
  return "error";
}

std::string ActionOf(const RequestContext& ctx) { return "http." + ctx.route; }

Status RequestAuditor::Commit(const Exchange& e) const {
  if (sink_ == nullptr) return Status::OK();
  const RequestContext& ctx = *e.ctx;
  // Refused probes are recorded anyway: every authentication failure is audited.
  if (ctx.probe && !policy_.record_probes && ctx.auth_failure.empty()) return Status::OK();

  audit::AuditRecord record;
  record.source = ctx.remote_addr;
  record.request_id = ctx.request_id;
  if (ctx.principal) {
    record.actor = ctx.principal->id;  // a key id or a user name, never a secret
    record.role = std::string(auth::RoleName(ctx.principal->role));
  }
  record.detail = ctx.auth_failure;
  record.action = ActionOf(ctx);
  if (ctx.route == "unmatched") record.target = TargetOf(e);
  record.outcome = std::string(OutcomeOf(e.status));
  record.http_status = e.status;
  record.total_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - ctx.start).count();
  record.request_sha256 = ctx.body_has_password ? std::string() : BodyDigest(e.request_body);
  record.response_sha256 = BodyDigest(e.response_body);

  Status committed = sink_->Record(std::move(record)).WaitCommitted();
  if (committed.ok()) return committed;
  std::string reason = sink_->Reason();
  if (reason.empty()) reason = committed.message();
  if (!policy_.fail_closed) {
    log::Error("request served without its audit record (audit.fail_closed is off)",
               {{"request_id", ctx.request_id}, {"error", reason}});
    return Status::OK();
  }
  log::Warn("request refused: its audit record was not committed",
            {{"request_id", ctx.request_id}, {"error", reason}});
  return Status::Unavailable(reason);
}

}  // namespace kimi::http
