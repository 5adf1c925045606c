// Policy: one parsed, validated policy document (policies/schema.json, docs/policies.md):
// content logging and retention, redaction, access rules and service levels, with the
// accessors other modules read. ParsePolicy() validates first (policy_validator.h) and
// refuses a document with any error, so a Policy value always satisfies the schema.
//
// Which fields the daemon enforces and which it only carries for other modules to read is
// listed in docs/policies.md ("Enforced where").
//
// Thread safety: value types and pure functions; a Policy is immutable once parsed and is
// shared between request threads through std::shared_ptr<const ...>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::policy {

enum class Action { kMask, kHash, kBlock };
std::string_view ActionName(Action action);
std::optional<Action> ParseAction(std::string_view name);

// What redaction did to one category in one request: never the value. The request's audit
// record carries these.
struct RedactionDecision {
  std::string category;
  Action action = Action::kMask;
  int64_t count = 0;
  bool operator==(const RedactionDecision&) const = default;
};

struct RedactionRule {
  std::string category;  // a built-in category (detectors.h) or a custom pattern's name
  Action action = Action::kMask;
};

struct CustomPattern {
  std::string name;     // lower-case identifier; its mask label is the upper-cased name
  std::string pattern;  // ECMAScript regular expression (policy/pattern_program.h)
  Action action = Action::kMask;
};

struct RedactionPolicy {
  bool before_model = false;    // redact prompts before they reach the model
  bool before_storage = true;   // redact content before it is stored in the audit log
  std::string medical_record_pattern;  // ECMAScript regex of this site's record numbers
  std::vector<RedactionRule> rules;    // built-in categories in use, each once
  std::vector<CustomPattern> custom_patterns;
};

struct ContentLogging {
  bool store_prompts = false;
  bool store_completions = false;
  int64_t retention_days = 30;  // stored content older than this is purged
};

struct AccessRule {
  // Exactly one of role / key_id is set: "role:<name>" or "key:<id>" in the document.
  std::string role;
  std::string key_id;
  std::vector<std::string> models;  // "*" allows every model
  bool tools = true;
  bool long_context = true;   // prompts above AccessPolicy::long_context_threshold_tokens
  bool thinking_max = true;   // thinking effort "max"
  int64_t max_prompt_tokens = 0;  // 0: no limit
  int64_t max_output_tokens = 0;  // 0: no limit
};

struct AccessPolicy {
  int64_t long_context_threshold_tokens = 32768;
  std::vector<AccessRule> rules;
};

struct TtftTarget {
  int64_t max_prompt_tokens = 0;  // the tier: prompts up to this many tokens
  int64_t target_ms = 0;
};

struct ServiceLevels {
  std::vector<TtftTarget> ttft_targets;  // ascending by max_prompt_tokens
  int64_t itl_target_ms_chat = 0;
  int64_t itl_target_ms_agentic = 0;
  std::string class_header = "x-kimi-workload";
  std::string default_class = "chat";
  std::vector<std::pair<std::string, std::string>> key_classes;  // (key id, class)
};

struct Policy {
  std::string name;
  std::string description;
  ContentLogging content_logging;
  RedactionPolicy redaction;
  AccessPolicy access;
  ServiceLevels service_levels;

  // The access rule for a caller: its key's rule when there is one, else its role's; null
  // when neither is written (the caller may use nothing).
  const AccessRule* RuleFor(std::string_view role, std::string_view key_id) const;
  // The smallest time-to-first-token tier that holds prompt_tokens; null above the largest.
  const TtftTarget* TtftTier(int64_t prompt_tokens) const;
  // That tier's target; nullopt above the largest tier.
  std::optional<int64_t> TtftTargetMs(int64_t prompt_tokens) const;
  // The workload class of a request: the key's class when the policy assigns one (the
  // operator's choice binds the key), else the class header's value when the request sent
  // one, else the default. InvalidArgument when the header names no class.
  Result<std::string> WorkloadClass(std::string_view key_id, const std::optional<std::string>& header_value) const;
  // Inter-token latency target of a class ("chat" or "agentic").
  int64_t ItlTargetMs(std::string_view workload_class) const;
  // The runtime admission priority of a class (GenerationRequest::priority, vLLM's
  // `priority`): 0 for the class with the tighter inter-token latency target (both when
  // equal), 1 for the other.
  int SchedulingPriority(std::string_view workload_class) const;
};

// Validates `document` and builds the Policy. InvalidArgument lists every error as
// "<json pointer>: <message>" joined by "; " (policy_validator.h gives them one by one).
Result<Policy> ParsePolicy(const nlohmann::json& document);

}  // namespace kimi::policy
