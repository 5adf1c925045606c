#include "policy/policy_decision.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "kimi/chat_format.h"
#include "kimi/request_prompt.h"

namespace kimi::policy {
namespace {

using Json = nlohmann::ordered_json;

PolicyDecision Deny(PolicyDecision decision, Status reason) {
  decision.verdict = PolicyDecision::Verdict::kDeny;
  decision.reason = std::move(reason);
  return decision;
}

std::string Caller(const RequestFacts& facts) {
  return facts.key_id.empty() ? "role '" + facts.role + "'" : "key '" + facts.key_id + "' (role '" + facts.role + "')";
}

// Whether the request uses tools in any form the prompt shows: declared (globally or by a
// system message) or in its history (an assistant's tool calls, a tool's result), which the
// chat format renders as tool-call markup whether or not anything is declared.
bool UsesTools(const ChatRequest& chat) {
  if (chat.tools.is_array() && !chat.tools.empty()) return true;
  if (!chat.messages.is_array()) return false;
  return std::any_of(chat.messages.begin(), chat.messages.end(), [](const Json& m) {
    if (!m.is_object()) return false;
    const auto non_empty = [&m](const char* key) {
      return m.contains(key) && !m[key].is_null() && !(m[key].is_array() && m[key].empty());
    };
    return non_empty("tools") || non_empty("tool_calls") || non_empty("tool_call_id") ||
           (m.contains("role") && m["role"] == "tool");
  });
}

// Applies `fn` to every text of the caller's that a backend receives, in place: for chat, the
// chat format's own list (kimi::ForEachRenderedText); for completions, the prompt; and the
// stop strings (not in the prompt, but in the body an upstream receives).
Status ForEachForwardedText(ServingRequest* request, const std::function<void(std::string*)>& fn) {
  for (std::string& stop : request->generation.stop) fn(&stop);
  if (request->endpoint == ServingEndpoint::kChatCompletions) return ForEachRenderedText(&request->chat, fn);
  fn(&request->prompt);
  return Status::OK();
}

Status Blocked(const Policy& policy, const std::string& category, std::string_view where) {
  return Status::InvalidArgument("the " + std::string(where) + " contains a value of the category '" + category +
                                 "', which the policy '" + policy.name + "' blocks");
}

// The chat prompt as the model will read it, checked as one text: a value split over several
// fields (two text parts that the prompt joins, say) escapes the field-by-field pass, so a
// finding here that the pass should have caught refuses the request rather than reach the
// model. The rendering is kept in *prompt for the steps after this one and the engine.
Status CheckRenderedPrompt(const ActivePolicy& active, const ServingRequest& request, bool rewritten,
                           std::optional<EncodedRequestPrompt>* prompt) {
  // The redaction cannot vouch for a prompt it cannot see: a render error refuses.
  KIMI_ASSIGN_OR_RETURN(*prompt, RenderRequestPrompt(request));
  RedactionTally tally;
  active.redactor->Redact((*prompt)->rendered.text, &tally);
  if (std::optional<std::string> blocked = tally.BlockedCategory()) {
    return Blocked(active.policy, *blocked, "prompt (across several of its fields)");
  }
  if (rewritten && !tally.decisions().empty()) {
    return Status::InvalidArgument("the prompt contains a value of the category '" + tally.decisions().front().category +
                                   "' split across several of its fields, which the policy '" + active.policy.name +
                                   "' redacts; send it in one field");
  }
  return Status::OK();
}

// Access rules; OK or the refusal.
Status CheckAccess(const Policy& policy, const AccessRule* rule, const RequestFacts& facts, api::ApiRequest* request,
                   PolicyDecision* decision) {
  if (rule == nullptr) {
    return Status::PermissionDenied("the policy '" + policy.name + "' has no access rule for " + Caller(facts));
  }
  const bool any_model = std::find(rule->models.begin(), rule->models.end(), "*") != rule->models.end();
  if (!any_model && std::find(rule->models.begin(), rule->models.end(), facts.model) == rule->models.end()) {
    return Status::PermissionDenied("the policy does not allow " + Caller(facts) + " to use the model '" + facts.model + "'");
  }
  ChatRequest& chat = request->serving.chat;
  if (!rule->tools && facts.chat && UsesTools(chat)) {
    return Status::PermissionDenied("the policy does not allow " + Caller(facts) + " to use tools");
  }
  // No effort line (a null effort) leaves the model's thinking as unbounded as "max" does.
  if (!rule->thinking_max && facts.chat && chat.thinking &&
      (chat.thinking_effort == "max" || chat.thinking_effort.is_null())) {
    decision->transformations.push_back(chat.thinking_effort.is_null() ? "thinking_effort:none->high"
                                                                       : "thinking_effort:max->high");
    chat.thinking_effort = "high";
  }
  if (rule->max_output_tokens > 0) {
    const api::ValidatedRequest& sent = request->validated;
    for (const auto& [field, value] : {std::pair{"max_completion_tokens", sent.max_completion_tokens_field},
                                       std::pair{"max_tokens", sent.max_tokens_field}}) {
      if (value && *value > rule->max_output_tokens) {
        return Status::InvalidArgument(std::string(field) + " exceeds the policy's limit of " +
                                       std::to_string(rule->max_output_tokens) + " output tokens for " + Caller(facts));
      }
    }
    if (!sent.max_completion_tokens_field && !sent.max_tokens_field) {
      request->serving.generation.max_tokens = rule->max_output_tokens;
      decision->transformations.push_back("max_tokens:" + std::to_string(rule->max_output_tokens));
    }
  }
  return Status::OK();
}

// The prompt-token limits of the caller's rule (step 4); OK or the refusal.
Status CheckPromptTokens(const Policy& policy, const AccessRule& rule, const RequestFacts& facts,
                         const ServingRequest& request, std::optional<EncodedRequestPrompt>* prompt,
                         PolicyDecision* decision) {
  const int64_t threshold = policy.access.long_context_threshold_tokens;
  const bool long_context_limited = !rule.long_context;
  const bool max_limited = rule.max_prompt_tokens > 0;
  if (!long_context_limited && !max_limited) return Status::OK();
  if (facts.count_prompt_tokens == nullptr) {
    return Status::Unavailable("the policy limits the prompt tokens of " + Caller(facts) +
                               ", and the appliance holds no tokenizer of the model '" + facts.model + "' to count them");
  }
  int64_t lowest = max_limited ? rule.max_prompt_tokens : threshold;
  if (long_context_limited) lowest = std::min(lowest, threshold);
  if (!prompt->has_value()) {
    KIMI_ASSIGN_OR_RETURN(*prompt, RenderRequestPrompt(request));
  }
  KIMI_ASSIGN_OR_RETURN(PromptTokens counted, facts.count_prompt_tokens(&**prompt, facts.chat, lowest));
  const std::string count = std::to_string(counted.tokens);
  decision->checks.push_back("prompt_tokens:" + (counted.exact ? count : "<=" + count));
  if (long_context_limited && counted.tokens > threshold) {
    decision->checks.push_back("long_context_threshold_tokens:" + std::to_string(threshold) + ":exceeded");
    return Status::PermissionDenied("the prompt has " + count + " tokens, above the long-context threshold of " +
                                    std::to_string(threshold) + " tokens, and the policy does not allow " +
                                    Caller(facts) + " long context");
  }
  if (max_limited && counted.tokens > rule.max_prompt_tokens) {
    decision->checks.push_back("max_prompt_tokens:" + std::to_string(rule.max_prompt_tokens) + ":exceeded");
    return Status::InvalidArgument("the prompt has " + count + " tokens; the policy's limit (max_prompt_tokens) for " +
                                   Caller(facts) + " is " + std::to_string(rule.max_prompt_tokens));
  }
  return Status::OK();
}

bool HasBlockRule(const RedactionPolicy& r) {
  auto blocks = [](const auto& rule) { return rule.action == Action::kBlock; };
  return std::any_of(r.rules.begin(), r.rules.end(), blocks) ||
         std::any_of(r.custom_patterns.begin(), r.custom_patterns.end(), blocks);
}

}  // namespace

PolicyDecision DecideRequest(const ActivePolicy& active, const RequestFacts& facts, api::ApiRequest* request) {
  const Policy& policy = active.policy;
  PolicyDecision decision;
  decision.policy_version = active.version;
  const AccessRule* rule = policy.RuleFor(facts.role, facts.key_id);
  if (Status access = CheckAccess(policy, rule, facts, request, &decision); !access.ok()) {
    return Deny(std::move(decision), std::move(access));
  }
  Result<std::string> workload_class = policy.WorkloadClass(facts.key_id, facts.class_header);
  if (!workload_class.ok()) return Deny(std::move(decision), workload_class.status());
  decision.workload_class = std::move(workload_class).value();
  decision.priority = policy.SchedulingPriority(decision.workload_class);

  // The rendered prompt, once a step needs it; it then travels with the request.
  std::optional<EncodedRequestPrompt> prompt;
  const bool rewrite = policy.redaction.before_model;
  if (rewrite || HasBlockRule(policy.redaction)) {
    RedactionTally tally;
    // Only a rewriting policy changes the request; otherwise the walk reads it in place.
    std::optional<ServingRequest> rewritten;
    if (rewrite) rewritten = request->serving;
    ServingRequest& walked = rewrite ? *rewritten : request->serving;
    Status status = ForEachForwardedText(&walked, [&](std::string* text) {
      std::string redacted = active.redactor->Redact(*text, &tally);
      if (rewrite) *text = std::move(redacted);
    });
    if (!status.ok()) return Deny(std::move(decision), std::move(status));
    if (std::optional<std::string> blocked = tally.BlockedCategory()) {
      decision.redactions = tally.decisions();
      return Deny(std::move(decision), Blocked(policy, *blocked, "prompt"));
    }
    if (facts.chat) {
      Status whole = CheckRenderedPrompt(active, walked, rewrite, &prompt);
      if (!whole.ok()) return Deny(std::move(decision), std::move(whole));
    }
    if (rewrite) {
      decision.redactions = tally.decisions();
      request->serving = std::move(*rewritten);
    }
  }
  // Counted after redaction: the rewritten prompt is what the model will see.
  if (Status tokens = CheckPromptTokens(policy, *rule, facts, request->serving, &prompt, &decision); !tokens.ok()) {
    return Deny(std::move(decision), std::move(tokens));
  }
  if (prompt) decision.prompt = std::make_shared<const EncodedRequestPrompt>(std::move(*prompt));
  return decision;
}

std::vector<std::string> DecisionAuditEntries(const PolicyDecision& decision) {
  std::vector<std::string> out;
  if (!decision.workload_class.empty()) out.push_back("class:" + decision.workload_class);
  for (const RedactionDecision& d : decision.redactions) {
    out.push_back("redact:" + d.category + ":" + std::string(ActionName(d.action)) + ":" + std::to_string(d.count));
  }
  for (const std::string& t : decision.transformations) out.push_back(t);
  for (const std::string& c : decision.checks) out.push_back(c);
  return out;
}

}  // namespace kimi::policy
