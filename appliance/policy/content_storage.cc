#include "policy/content_storage.h"

namespace kimi::policy {

std::optional<ContentToStore> ContentForStorage(const ActivePolicy& active, std::string_view prompt,
                                                std::string_view completion) {
  const ContentLogging& logging = active.policy.content_logging;
  if (!logging.store_prompts && !logging.store_completions) return std::nullopt;
  const bool redact = active.policy.redaction.before_storage;
  RedactionTally tally;
  auto prepare = [&](bool store, std::string_view text) -> std::string {
    if (!store) return "";
    return redact ? active.redactor->Redact(text, &tally, /*mask_blocked=*/true) : std::string(text);
  };
  ContentToStore out;
  out.prompt = prepare(logging.store_prompts, prompt);
  out.completion = prepare(logging.store_completions, completion);
  out.redactions = tally.decisions();
  return out;
}

int64_t RetentionCutoffMs(const Policy& policy, int64_t now_ms) {
  constexpr int64_t kDayMs = 24 * 60 * 60 * 1000;
  return now_ms - policy.content_logging.retention_days * kDayMs;
}

}  // namespace kimi::policy
