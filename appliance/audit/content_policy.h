// AuditContentPolicy: whether a request's prompt and completion text are kept in the audit log
// and for how long. The policy engine decides it (default: not kept); the audit log only
// applies it. Content lives apart from its record and only its digest is hashed into the
// leaf (record.h), so purging it at the retention age leaves every record and the tree
// verifiable.
// Public header of audit/: other folders include it.
// Thread safety: value type and pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "audit/record.h"

namespace kimi::audit {

struct AuditContentPolicy {
  bool store_content = false;  // off by default: no prompt or completion text is stored
  int retention_days = 0;      // stored content older than this is purged
};

// Gives the record its content (already redacted by the policy) only when the policy stores
// content; otherwise the record has neither content nor content digest.
void ApplyContentPolicy(const AuditContentPolicy& policy, std::optional<AuditContent> content, AuditRecord* record);

// Records older than this (Unix ms) lose their content: now_ms minus the retention age.
int64_t ContentRetentionCutoffMs(const AuditContentPolicy& policy, int64_t now_ms);

}  // namespace kimi::audit
