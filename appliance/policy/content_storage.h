// What of a request's content the audit log may keep under a policy: the policy's
// content_logging says whether prompt and completion text are stored and for how long, and
// redaction.before_storage whether the redactor runs over them first (block categories are
// masked there: by then the request was allowed, and the value must not be stored). The
// audit content writer calls these; they hold no state.
// Public header of policy/: other folders include it.
// Thread safety: pure functions of an immutable ActivePolicy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy_service.h"

namespace kimi::policy {

struct ContentToStore {
  std::string prompt;      // empty when the policy does not store prompts
  std::string completion;  // empty when the policy does not store completions
  std::vector<RedactionDecision> redactions;  // what redaction before storage did
};

// `prompt` is the request body: JSON is redacted on its decoded keys and values and stored
// as compact JSON. nullopt when the policy stores neither prompts nor completions.
std::optional<ContentToStore> ContentForStorage(const ActivePolicy& active, std::string_view prompt,
                                                std::string_view completion);

// A client's text outside its body (its X-Request-Id, the path it asked for) as the audit log
// and the access log may keep it: redacted, block categories masked, when
// redaction.before_storage is on; else as sent.
std::string ClientTextForStorage(const ActivePolicy& active, std::string_view text);

// Stored content older than this Unix time in ms is past the policy's retention
// (AuditSink::PurgeContentBefore takes it).
int64_t RetentionCutoffMs(const Policy& policy, int64_t now_ms);

}  // namespace kimi::policy
