// StreamLinks: the rule that ties a streamed response's two records together. A stream's start
// record (outcome "started", no start_seq) is committed before its first byte; its end record
// carries start_seq, the start's seq (record.h). Along the log every end record points back to
// an earlier start record of the same request id that no other record ended. The writer never
// breaks the rule (http/generation_audit.h for the end it writes itself, AuditSink for the
// `interrupted` ends after a crash), so a record that does was not written there by it: an
// end forged for a stream, or a second end after a stream's real one. Every verifier (the log
// verifier, hence the daemon's start-up check and background pass, and the export verifier)
// feeds it the records in sequence order, as it does TimeOrder.
//
// A pass that does not start at seq 0 (a start-up check from its checkpoint, an exported time
// range) has not seen the starts before its first record: `lookup`, when given, reads such a
// start; without one the link to it is taken on trust and only a second end of it is caught.
//
// Memory: one entry per stream started and not yet ended in the pass (as many as were open at
// once), plus one per start before the pass that the pass saw ended.
//
// Thread safety: a value type; not synchronised.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "audit/record.h"
#include "kimi/status.h"

namespace kimi::audit {

// What the rule reads of a record.
struct StreamLink {
  uint64_t seq = 0;
  int64_t version = kRecordFormatVersion;
  std::string request_id;
  std::string outcome;
  int64_t start_seq = kNoStartSeq;

  static StreamLink Of(const AuditRecord& record);
};

class StreamLinks {
 public:
  // The record at seq (nullopt when there is none); an error only when it cannot be read.
  using Lookup = std::function<Result<std::optional<StreamLink>>(uint64_t seq)>;

  explicit StreamLinks(Lookup lookup = nullptr) : lookup_(std::move(lookup)) {}

  // The problem with `record`'s link, nullopt when it keeps the rule; an error only when the
  // lookup fails. Precondition: records come in rising seq order.
  Result<std::optional<std::string>> Next(const StreamLink& record);

 private:
  Result<std::optional<std::string>> EndsAStartBeforeThePass(const StreamLink& end);

  Lookup lookup_;
  std::optional<uint64_t> first_seq_;
  std::optional<uint64_t> last_seq_;
  bool dense_ = true;  // every seq since first_seq_ was seen
  std::unordered_map<uint64_t, std::string> open_;   // start seq -> request id, not yet ended
  std::unordered_set<uint64_t> ended_before_pass_;   // starts before the pass this pass saw ended
};

}  // namespace kimi::audit
