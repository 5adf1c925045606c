#include "policy/content_storage.h"

#include <nlohmann/json.hpp>

#include "kimi/chat_format.h"

namespace kimi::policy {
namespace {

// A request body is redacted on its decoded values, key by key and string by string: its
// JSON text may spell a value with escapes ("alice\u0040example.com") that no detector reads
// as the value the model reads. Text that is not JSON is redacted as it is; a body too deeply
// nested to walk is not stored at all.
std::string RedactBody(const Redactor& redactor, std::string_view body, RedactionTally* tally) {
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return redactor.Redact(body, tally, /*mask_blocked=*/true);
  bool changed = false;
  Status walked = ForEachText(&parsed, [&](std::string* text) {
    std::string redacted = redactor.Redact(*text, tally, /*mask_blocked=*/true);
    if (redacted != *text) {
      changed = true;
      *text = std::move(redacted);
    }
  });
  if (!walked.ok()) return "[not stored: " + walked.message() + "]";
  if (!changed) return std::string(body);
  return parsed.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

std::optional<ContentToStore> ContentForStorage(const ActivePolicy& active, std::string_view prompt,
                                                std::string_view completion) {
  const ContentLogging& logging = active.policy.content_logging;
  if (!logging.store_prompts && !logging.store_completions) return std::nullopt;
  const bool redact = active.policy.redaction.before_storage;
  RedactionTally tally;
  ContentToStore out;
  if (logging.store_prompts) out.prompt = redact ? RedactBody(*active.redactor, prompt, &tally) : std::string(prompt);
  if (logging.store_completions) {
    out.completion = redact ? active.redactor->Redact(completion, &tally, /*mask_blocked=*/true) : std::string(completion);
  }
  out.redactions = tally.decisions();
  return out;
}

std::string ClientTextForStorage(const ActivePolicy& active, std::string_view text) {
  if (!active.policy.redaction.before_storage || active.redactor->empty()) return std::string(text);
  RedactionTally tally;
  return active.redactor->Redact(text, &tally, /*mask_blocked=*/true);
}

int64_t RetentionCutoffMs(const Policy& policy, int64_t now_ms) {
  constexpr int64_t kDayMs = 24 * 60 * 60 * 1000;
  return now_ms - policy.content_logging.retention_days * kDayMs;
}

}  // namespace kimi::policy
