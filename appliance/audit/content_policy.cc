#include "audit/content_policy.h"

#include <algorithm>

namespace kimi::audit {

void ApplyContentPolicy(const AuditContentPolicy& policy, std::optional<AuditContent> content, AuditRecord* record) {
  if (policy.store_content && content.has_value()) {
    record->content = std::move(content);
  } else {
    record->content.reset();
    record->content_sha256.clear();
  }
}

int64_t ContentRetentionCutoffMs(const AuditContentPolicy& policy, int64_t now_ms) {
  constexpr int64_t kDayMs = 24 * 60 * 60 * 1000;
  return now_ms - std::max<int64_t>(0, policy.retention_days) * kDayMs;
}

}  // namespace kimi::audit
