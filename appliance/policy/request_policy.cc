#include "policy/request_policy.h"

#include <utility>

#include "auth/roles.h"
#include "policy/content_storage.h"
#include "policy/policy_decision.h"
#include "policy/policy_service.h"

namespace kimi::policy {

AppliedPolicy ApplyRequestPolicy(const PolicyService* policies, const RequestCaller& caller, api::ApiRequest* request) {
  AppliedPolicy applied;
  if (policies == nullptr || caller.principal == nullptr) return applied;
  std::shared_ptr<const ActivePolicy> active = policies->Active();
  if (active == nullptr) return applied;
  RequestFacts facts;
  facts.role = std::string(auth::RoleName(caller.principal->role));
  if (caller.principal->kind == auth::Principal::Kind::kApiKey) facts.key_id = caller.principal->id;
  facts.chat = request->validated.endpoint == api::Endpoint::kChatCompletions;
  facts.model = request->validated.model;  // the request rules require it
  if (caller.header) {
    if (std::optional<std::string> value = caller.header(active->policy.service_levels.class_header)) {
      facts.class_header = std::move(*value);
    }
  }
  facts.count_prompt_tokens = policies->PromptTokenCounterFor(facts.model);
  PolicyDecision decision = DecideRequest(*active, facts, request);
  applied.audit_entries = {"policy:v" + std::to_string(decision.policy_version)};
  for (std::string& entry : DecisionAuditEntries(decision)) applied.audit_entries.push_back(std::move(entry));
  const ContentLogging& logging = active->policy.content_logging;
  if (logging.store_prompts || logging.store_completions) {
    applied.stored_content = [active](std::string_view request_body,
                                      std::string_view completion) -> std::optional<audit::AuditContent> {
      std::optional<ContentToStore> kept = ContentForStorage(*active, request_body, completion);
      if (!kept) return std::nullopt;
      return audit::AuditContent{std::move(kept->prompt), std::move(kept->completion)};
    };
  }
  if (!decision.allowed()) {
    applied.refusal = std::move(decision.reason);
    return applied;
  }
  applied.workload_class = std::move(decision.workload_class);
  applied.priority = decision.priority;
  applied.prompt = std::move(decision.prompt);
  return applied;
}

}  // namespace kimi::policy
