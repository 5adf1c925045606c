#include "policy/policy_routes.h"

#include <httplib.h>

#include "api/backend.h"
#include "kimi/utc_time.h"
#include "policy/content_storage.h"
#include "policy/policy_decision.h"
#include "policy/policy_service.h"

namespace kimi::policy {
namespace {

using nlohmann::json;

Result<PolicyService*> Service(const http::Services& services) {
  if (services.policy == nullptr) return Status::Unavailable("policies are not enabled in this daemon");
  return services.policy;
}

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

json VersionJson(const StoredPolicy& p, int64_t active_version) {
  return json{{"version", p.version}, {"name", p.name}, {"created_at", FormatUtcMillis(p.created_ms)},
              {"actor", p.actor}, {"active", p.version == active_version}};
}

}  // namespace

Status HandleListPolicies(const http::Services& services, http::RequestContext&, const httplib::Request&,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(PolicyService * service, Service(services));
  std::shared_ptr<const ActivePolicy> active = service->Active();
  if (active == nullptr) return Status::Unavailable("no policy is active yet");
  KIMI_ASSIGN_OR_RETURN(std::vector<StoredPolicy> versions, service->store().List());
  json list = json::array();
  for (const StoredPolicy& p : versions) list.push_back(VersionJson(p, active->version));
  Reply(res, 200, json{{"active_version", active->version}, {"active", active->document}, {"versions", list}});
  return Status::OK();
}

Status HandleSubmitPolicy(const http::Services& services, http::RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(PolicyService * service, Service(services));
  json document = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Status::InvalidArgument("the request body is not valid JSON");
  PolicyActor actor;
  if (ctx.principal) {
    actor.name = ctx.principal->id;
    actor.role = std::string(auth::RoleName(ctx.principal->role));
  }
  actor.source = ctx.remote_addr;
  actor.request_id = ctx.request_id;
  KIMI_ASSIGN_OR_RETURN(int64_t version, service->Submit(document, actor));
  Reply(res, 201, json{{"version", version}, {"active", true}, {"name", document["name"]}});
  return Status::OK();
}

Status HandleGetPolicy(const http::Services& services, http::RequestContext& ctx, const httplib::Request&,
                       httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(PolicyService * service, Service(services));
  const std::string& text = ctx.path_params["version"];
  int64_t version = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || version > (int64_t{1} << 40)) return Status::NotFound("no policy version '" + text + "'");
    version = version * 10 + (c - '0');
  }
  KIMI_ASSIGN_OR_RETURN(std::optional<StoredPolicy> stored, service->store().Get(version));
  if (!stored) return Status::NotFound("no policy version '" + text + "'");
  std::shared_ptr<const ActivePolicy> active = service->Active();
  json out = VersionJson(*stored, active ? active->version : 0);
  out["document"] = json::parse(stored->document, nullptr, /*allow_exceptions=*/false);
  Reply(res, 200, out);
  return Status::OK();
}

Result<RequestPolicy> ApplyRequestPolicy(const http::Services& services, http::RequestContext& ctx,
                                         const httplib::Request& req, api::ApiRequest* request) {
  if (services.policy == nullptr || !ctx.principal) return RequestPolicy{};
  std::shared_ptr<const ActivePolicy> active = services.policy->Active();
  if (active == nullptr) return RequestPolicy{};
  RequestFacts facts;
  facts.role = std::string(auth::RoleName(ctx.principal->role));
  if (ctx.principal->kind == auth::Principal::Kind::kApiKey) facts.key_id = ctx.principal->id;
  facts.chat = request->validated.endpoint == api::Endpoint::kChatCompletions;
  facts.model = request->validated.model;  // the request rules require it
  if (const std::string& header = active->policy.service_levels.class_header; req.has_header(header)) {
    facts.class_header = req.get_header_value(header);
  }
  facts.count_prompt_tokens = services.policy->PromptTokenCounterFor(facts.model);
  PolicyDecision decision = DecideRequest(*active, facts, request);
  // The request's audit record names the policy version and every decision (refusals too).
  ctx.audit.policy = {"policy:v" + std::to_string(decision.policy_version)};
  for (std::string& entry : DecisionAuditEntries(decision)) ctx.audit.policy.push_back(std::move(entry));
  const ContentLogging& logging = active->policy.content_logging;
  if (logging.store_prompts || logging.store_completions) {
    ctx.audit.stored_content = [active](std::string_view request_body,
                                        std::string_view completion) -> std::optional<audit::AuditContent> {
      std::optional<ContentToStore> kept = ContentForStorage(*active, request_body, completion);
      if (!kept) return std::nullopt;
      return audit::AuditContent{std::move(kept->prompt), std::move(kept->completion)};
    };
  }
  if (!decision.allowed()) return decision.reason;
  return RequestPolicy{decision.workload_class, decision.priority, std::move(decision.prompt)};
}

}  // namespace kimi::policy
