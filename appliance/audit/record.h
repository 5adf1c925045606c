// AuditRecord: one audited event (an API request, refused or served, or an administrative act)
// and its canonical bytes, which are the Merkle leaf data of the audit log.
//
// The optional content (prompt and completion text, after the policy's redaction) is not part
// of the canonical bytes: only its SHA-256 is, so purging content at the retention age leaves
// every leaf hash unchanged. docs/audit.md defines the canonical encoding byte for byte.
// Public header of audit/: other folders include it.
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "kimi/utc_time.h"

namespace kimi::audit {

// Version of the canonical encoding; written as "v" into every record. Older records (version
// 1 before the backend fields existed, version 2 before client_request_id, version 3 before
// start_seq) keep their version and their bytes; new records are written at the current
// version. docs/audit.md lists each version's keys.
inline constexpr int64_t kRecordFormatVersion = 4;
inline constexpr int64_t kOldestRecordFormatVersion = 1;

// A streamed response has two records: one committed before its first byte, with this
// outcome, and one when it ends (its outcome, what was sent), whose start_seq is the first's
// seq. The store keeps the set of started streams without an end (AuditStore::OpenStreams).
inline constexpr std::string_view kOutcomeStreamStarted = "started";
// The outcome of the end record of a stream cut short by the daemon: stopping with the stream
// still running, or dying (written at the next start, AuditSink::RecordInterruptedStreams).
inline constexpr std::string_view kOutcomeStreamInterrupted = "interrupted";
// start_seq of a record that ends no stream.
inline constexpr int64_t kNoStartSeq = -1;

struct AuditContent {
  std::string prompt;      // after redaction
  std::string completion;  // after redaction
  bool operator==(const AuditContent&) const = default;
};

struct AuditRecord {
  int64_t version = kRecordFormatVersion;  // the canonical encoding this record is hashed with
  uint64_t seq = 0;        // leaf index in the tree, dense from 0; assigned by the writer
  int64_t time_ms = 0;     // Unix time in milliseconds, UTC; the sink fills it when 0
  std::string actor;       // key id or user name, never a secret
  std::string role;        // role of the actor at the time: user, admin, auditor, ...
  std::string source;      // client address, "ip:port" or a unix socket name
  std::string request_id;  // the server's own id of the request, unique
  std::string action;      // e.g. "chat.completions", "auth.login_failed", "model.activate"
  std::string target;      // what an administrative act acted on (key id, user, model)
  std::string model;
  std::string model_digest;  // bundle digest of the model version
  std::string outcome;     // "ok", "denied", "invalid", "error", ...
  int64_t http_status = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t ttft_us = 0;     // time to first token, microseconds
  int64_t total_us = 0;    // total latency, microseconds
  std::vector<std::string> policy;  // policy decisions taken, in order
  // Since version 2: who served a model request and how the router chose it.
  std::string backend;         // the backend's name ("embedded", "upstream:worker-1")
  std::string route_decision;  // the router's one-line account of its choice
  int64_t attempts = 0;        // backends tried (1 unless the router retried)
  // Since version 3: the X-Request-Id the client sent, whatever it was ("" when none); the
  // server never adopts it as request_id, so two requests cannot share an id.
  std::string client_request_id;
  // Since version 4: for the record that ends a streamed response, the seq of the record that
  // started it; kNoStartSeq for every other record.
  int64_t start_seq = kNoStartSeq;
  std::string request_sha256;   // hex of the request body's SHA-256; empty when no body
  std::string response_sha256;  // hex of the response body's SHA-256; empty when no body
  std::string detail;      // free text for administrative acts
  std::string content_sha256;   // hex SHA-256 of CanonicalContentBytes(content); "" when none
  std::optional<AuditContent> content;  // stored apart; purgeable

  bool operator==(const AuditRecord&) const = default;
};

// Passes every text field through AuditText (audit_text.h: valid UTF-8, line-breaking
// characters escaped, bounded in length with the whole value's digest) and sets
// content_sha256 from content. The sink calls it before assigning a sequence number, so no
// caller can store an unbounded or line-breaking string. The content itself (stored apart,
// purgeable, only for authenticated model requests) is made valid UTF-8 but not bounded.
void NormalizeRecord(AuditRecord* record);

// The canonical bytes of the record (the Merkle leaf data), in the encoding of
// record.version. Precondition: normalised, and version is a known version.
std::string CanonicalRecordBytes(const AuditRecord& record);
// Canonical bytes of the content, whose SHA-256 is the record's content_sha256.
std::string CanonicalContentBytes(const AuditContent& content);

// "2026-11-29T23:19:17.123Z" (one formatter for logs and records: kimi/utc_time.h).
using ::kimi::FormatUtcMillis;
// Accepts "YYYY-MM-DDTHH:MM:SS[.mmm]Z", "YYYY-MM-DD" (midnight UTC) or integer milliseconds.
Result<int64_t> ParseUtcMillis(std::string_view text);

// Readable JSON for export: every field, plus "time" in UTC text and the content when held.
nlohmann::json RecordToJson(const AuditRecord& record);
// The inverse for the fields that are hashed (and the content when present): an exported
// record read back for verification. InvalidArgument naming the first missing or mistyped
// field; an unknown version is InvalidArgument too.
Result<AuditRecord> RecordFromJson(const nlohmann::json& j);
bool IsKnownRecordVersion(int64_t version);

}  // namespace kimi::audit
