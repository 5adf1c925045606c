// The policy decision step: the one place in the request path where the active policy is
// applied to an API request, after the request rules accepted it and before any backend is
// called. It works on the typed request (api/request_gate.h) and returns allow, deny with a
// reason, or allow with transformations (the typed request is rewritten in place), and the
// redaction decisions for the audit record. Unit-testable without the server: it reads only
// the policy, the caller and the request.
//
// In order:
//   1. access: the caller's rule (its key's, else its role's; none: 403); the model must be
//      listed (or "*"); tools declared while the rule forbids tools: 403; thinking effort
//      "max" while the rule forbids it: lowered to "high" (a transformation); max_tokens /
//      max_completion_tokens above the rule's max_output_tokens: 400; neither sent: the
//      limit is written into max_tokens (a transformation).
//   2. the workload class (Policy::WorkloadClass: the key's class, else the class header,
//      else the default; a header naming no class: 400) and its scheduling priority.
//   3. redaction of the prompt: every text the K3 chat format prints from the request
//      (kimi::ForEachRenderedText over the typed chat request: contents and parts, names,
//      reasoning, tool calls' names and decoded arguments, tools with their descriptions and
//      schemas, response_format), or the completions prompt, each on its decoded value. A finding whose action is block refuses
//      the request with 400 naming the category, never the value, on every request; mask and
//      hash rewrite those texts only when the policy's redaction.before_model is set. The
//      rendered chat prompt (kimi::RenderRequestPrompt) is then checked as one text: a
//      blocked value, or with before_model a value of any category, that only appears when
//      fields are joined (split across two text parts) refuses the request with 400.
//   4. prompt tokens, only when a limit applies to the caller (the rule forbids long context,
//      or sets max_prompt_tokens): the rendered prompt (after redaction; the rendering of
//      step 3 when it made one) is counted with the serving model's tokenizer
//      (RequestFacts::count_prompt_tokens, the engine's CountPromptTokens: what
//      usage.prompt_tokens will report). Above the
//      long-context threshold while the rule forbids long context: 403; above
//      max_prompt_tokens: 400; each names the limit. No counter for the model: 503.
//
// Thread safety: pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/request_gate.h"
#include "kimi/request_prompt.h"
#include "kimi/status.h"
#include "policy/policy_service.h"
#include "policy/prompt_tokens.h"

namespace kimi::policy {

struct RequestFacts {
  std::string role;    // the principal's role name ("user", ...)
  std::string key_id;  // the API key id; empty for a console session
  std::string model;   // the model the request will be served by
  bool chat = true;    // /v1/chat/completions (else /v1/completions)
  // The value of the policy's class header (service_levels.class_header); nullopt: not sent.
  std::optional<std::string> class_header;
  // Counts with the tokenizer of `model`; null when the appliance holds none for it.
  PromptTokenCounter count_prompt_tokens;
};

struct PolicyDecision {
  enum class Verdict { kAllow, kDeny };
  Verdict verdict = Verdict::kAllow;
  Status reason;  // deny: PermissionDenied (access) or InvalidArgument (blocked, limits)
  int64_t policy_version = 0;
  std::vector<std::string> transformations;  // e.g. "thinking_effort:max->high"
  std::vector<RedactionDecision> redactions;  // for the audit record; never values
  // Limits checked, for the audit record: "prompt_tokens:<n>" (or "<=<n>" for an upper
  // bound) and, on a refusal, the limit crossed ("max_prompt_tokens:<limit>:exceeded").
  std::vector<std::string> checks;
  std::string workload_class;  // "chat" or "agentic" once decided
  int priority = 0;            // Policy::SchedulingPriority of the class
  // The prompt as steps 3 and 4 rendered it (and tokenised it, when step 4 counted it
  // exactly), for the backend request, so that the engine neither renders nor tokenises it
  // again; null when neither step needed it.
  std::shared_ptr<const EncodedRequestPrompt> prompt;
  bool allowed() const { return verdict == Verdict::kAllow; }
};

PolicyDecision DecideRequest(const ActivePolicy& active, const RequestFacts& facts, api::ApiRequest* request);

// "class:<name>", "redact:<category>:<action>:<count>" per decision, each transformation,
// then each check: the strings the audit record's `policy` list carries.
std::vector<std::string> DecisionAuditEntries(const PolicyDecision& decision);

}  // namespace kimi::policy
