#include "policy/policy.h"

#include "policy/policy_validator.h"

namespace kimi::policy {
namespace {

using nlohmann::json;

int64_t Int(const json& v) { return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>()); }

Action ActionOf(const json& v) { return *ParseAction(v.get<std::string>()); }

RedactionPolicy ParseRedaction(const json& r) {
  RedactionPolicy out;
  out.before_model = r.at("before_model").get<bool>();
  out.before_storage = r.at("before_storage").get<bool>();
  out.medical_record_pattern = r.value("medical_record_pattern", "");
  for (const json& rule : r.at("rules")) out.rules.push_back({rule.at("category").get<std::string>(), ActionOf(rule.at("action"))});
  for (const json& c : r.value("custom_patterns", json::array())) {
    out.custom_patterns.push_back({c.at("name").get<std::string>(), c.at("pattern").get<std::string>(), ActionOf(c.at("action"))});
  }
  return out;
}

AccessPolicy ParseAccess(const json& a) {
  AccessPolicy out;
  out.long_context_threshold_tokens = Int(a.at("long_context_threshold_tokens"));
  for (const json& r : a.at("rules")) {
    AccessRule rule;
    const std::string subject = r.at("subject").get<std::string>();
    if (subject.starts_with("role:")) rule.role = subject.substr(5);
    else rule.key_id = subject.substr(4);
    rule.models = r.at("models").get<std::vector<std::string>>();
    rule.tools = r.value("tools", true);
    rule.long_context = r.value("long_context", true);
    rule.thinking_max = r.value("thinking_max", true);
    if (r.contains("max_prompt_tokens")) rule.max_prompt_tokens = Int(r.at("max_prompt_tokens"));
    if (r.contains("max_output_tokens")) rule.max_output_tokens = Int(r.at("max_output_tokens"));
    out.rules.push_back(std::move(rule));
  }
  return out;
}

ServiceLevels ParseServiceLevels(const json& s) {
  ServiceLevels out;
  for (const json& t : s.at("ttft_targets")) out.ttft_targets.push_back({Int(t.at("max_prompt_tokens")), Int(t.at("target_ms"))});
  out.itl_target_ms_chat = Int(s.at("itl_targets").at("chat"));
  out.itl_target_ms_agentic = Int(s.at("itl_targets").at("agentic"));
  out.class_header = s.value("class_header", out.class_header);
  out.default_class = s.value("default_class", out.default_class);
  for (const json& k : s.value("key_classes", json::array())) {
    out.key_classes.emplace_back(k.at("key").get<std::string>(), k.at("class").get<std::string>());
  }
  return out;
}

bool IsWorkloadClass(std::string_view name) { return name == "chat" || name == "agentic"; }

}  // namespace

std::string_view ActionName(Action action) {
  switch (action) {
    case Action::kMask: return "mask";
    case Action::kHash: return "hash";
    case Action::kBlock: return "block";
  }
  return "mask";
}

std::optional<Action> ParseAction(std::string_view name) {
  if (name == "mask") return Action::kMask;
  if (name == "hash") return Action::kHash;
  if (name == "block") return Action::kBlock;
  return std::nullopt;
}

const AccessRule* Policy::RuleFor(std::string_view role, std::string_view key_id) const {
  const AccessRule* by_role = nullptr;
  for (const AccessRule& rule : access.rules) {
    if (!key_id.empty() && rule.key_id == key_id) return &rule;
    if (!rule.role.empty() && rule.role == role && by_role == nullptr) by_role = &rule;
  }
  return by_role;
}

const TtftTarget* Policy::TtftTier(int64_t prompt_tokens) const {
  for (const TtftTarget& tier : service_levels.ttft_targets) {
    if (prompt_tokens <= tier.max_prompt_tokens) return &tier;
  }
  return nullptr;
}

std::optional<int64_t> Policy::TtftTargetMs(int64_t prompt_tokens) const {
  const TtftTarget* tier = TtftTier(prompt_tokens);
  return tier ? std::optional<int64_t>(tier->target_ms) : std::nullopt;
}

Result<std::string> Policy::WorkloadClass(std::string_view key_id, const std::optional<std::string>& header_value) const {
  for (const auto& [key, cls] : service_levels.key_classes) {
    if (!key_id.empty() && key == key_id) return cls;
  }
  if (!header_value) return service_levels.default_class;
  if (!IsWorkloadClass(*header_value)) {
    return Status::InvalidArgument("the header " + service_levels.class_header + " names the unknown workload class '" +
                                   *header_value + "' (known: chat, agentic)");
  }
  return *header_value;
}

int64_t Policy::ItlTargetMs(std::string_view workload_class) const {
  return workload_class == "agentic" ? service_levels.itl_target_ms_agentic : service_levels.itl_target_ms_chat;
}

int Policy::SchedulingPriority(std::string_view workload_class) const {
  const int64_t own = ItlTargetMs(workload_class);
  const int64_t other = ItlTargetMs(workload_class == "agentic" ? "chat" : "agentic");
  return own <= other ? 0 : 1;
}

Result<Policy> ParsePolicy(const nlohmann::json& document) {
  std::vector<PolicyError> errors = ValidatePolicy(document);
  if (!errors.empty()) {
    std::string message = "the policy is invalid (" + std::to_string(errors.size()) + " error" +
                          (errors.size() == 1 ? "" : "s") + "): ";
    for (size_t i = 0; i < errors.size(); ++i) message += (i ? "; " : "") + FormatPolicyError(errors[i]);
    return Status::InvalidArgument(message);
  }
  Policy p;
  p.name = document.at("name").get<std::string>();
  p.description = document.value("description", "");
  const json& logging = document.at("content_logging");
  p.content_logging.store_prompts = logging.at("store_prompts").get<bool>();
  p.content_logging.store_completions = logging.at("store_completions").get<bool>();
  p.content_logging.retention_days = Int(logging.at("retention_days"));
  p.redaction = ParseRedaction(document.at("redaction"));
  p.access = ParseAccess(document.at("access"));
  p.service_levels = ParseServiceLevels(document.at("service_levels"));
  return p;
}

}  // namespace kimi::policy
