#include "policy/policy_routes.h"

#include <httplib.h>

#include "api/backend.h"
#include "policy/content_storage.h"
#include "policy/policy_decision.h"
#include "policy/policy_service.h"

namespace kimi::policy {

Result<RequestPolicy> ApplyRequestPolicy(api::Endpoint endpoint, const PolicyService* policies,
                                         const api::Backend* backend, http::RequestContext& ctx,
                                         const httplib::Request& req, nlohmann::ordered_json* body) {
  if (policies == nullptr || !ctx.principal) return RequestPolicy{};
  std::shared_ptr<const ActivePolicy> active = policies->Active();
  if (active == nullptr) return RequestPolicy{};
  RequestFacts facts;
  facts.role = std::string(auth::RoleName(ctx.principal->role));
  if (ctx.principal->kind == auth::Principal::Kind::kApiKey) facts.key_id = ctx.principal->id;
  facts.chat = endpoint == api::Endpoint::kChatCompletions;
  if (body->contains("model") && (*body)["model"].is_string()) {
    facts.model = (*body)["model"].get<std::string>();
  } else if (backend != nullptr && !backend->Models().empty()) {
    facts.model = backend->Models().front();  // the one the handler will pick
  }
  if (const std::string& header = active->policy.service_levels.class_header; req.has_header(header)) {
    facts.class_header = req.get_header_value(header);
  }
  facts.count_prompt_tokens = policies->PromptTokenCounterFor(facts.model);
  PolicyDecision decision = DecideRequest(*active, facts, body);
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
  return RequestPolicy{decision.workload_class, decision.priority, std::move(decision.encoded_prompt)};
}

}  // namespace kimi::policy
