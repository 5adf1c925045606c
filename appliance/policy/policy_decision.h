// The policy decision step: the one place in the request path where the active policy is
// applied to an API request, after the request rules accepted the body and before any
// backend is called. It returns allow, deny with a reason, or allow with transformations
// (the body is rewritten in place), and the redaction decisions for the audit record.
// Unit-testable without the server: it reads only the policy, the caller and the body.
//
// In order:
//   1. access: the caller's rule (its key's, else its role's; none: 403); the model must be
//      listed (or "*"); tools declared while the rule forbids tools: 403; thinking effort
//      "max" while the rule forbids it: lowered to "high" (a transformation); max_tokens /
//      max_completion_tokens above the rule's max_output_tokens: 400; neither sent: the
//      limit is written into max_tokens (a transformation).
//   2. redaction of the prompt (chat message contents, text parts, the completions prompt):
//      a finding whose action is block refuses the request with 400 naming the category,
//      never the value, on every request; mask and hash rewrite the prompt only when the
//      policy's redaction.before_model is set.
// Not enforced here (the prompt is not tokenised yet): max_prompt_tokens and long_context;
// the engine or scheduler reads them from the Policy.
//
// Thread safety: pure function of its arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "policy/policy_service.h"

namespace kimi::policy {

struct RequestFacts {
  std::string role;    // the principal's role name ("user", ...)
  std::string key_id;  // the API key id; empty for a console session
  std::string model;   // the model the request will be served by
  bool chat = true;    // /v1/chat/completions (else /v1/completions)
};

struct PolicyDecision {
  enum class Verdict { kAllow, kDeny };
  Verdict verdict = Verdict::kAllow;
  Status reason;  // deny: PermissionDenied (access) or InvalidArgument (blocked, limits)
  int64_t policy_version = 0;
  std::vector<std::string> transformations;  // e.g. "thinking_effort:max->high"
  std::vector<RedactionDecision> redactions;  // for the audit record; never values
  bool allowed() const { return verdict == Verdict::kAllow; }
};

PolicyDecision DecideRequest(const ActivePolicy& active, const RequestFacts& facts, nlohmann::ordered_json* body);

// "redact:<category>:<action>:<count>" per decision, then each transformation: the strings
// the audit record's `policy` list carries.
std::vector<std::string> DecisionAuditEntries(const PolicyDecision& decision);

}  // namespace kimi::policy
