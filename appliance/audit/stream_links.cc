#include "audit/stream_links.h"

namespace kimi::audit {

StreamLink StreamLink::Of(const AuditRecord& record) {
  return StreamLink{record.seq, record.version, record.request_id, record.outcome, record.start_seq};
}

Result<std::optional<std::string>> StreamLinks::Next(const StreamLink& record) {
  using Problem = std::optional<std::string>;
  if (last_seq_ && record.seq != *last_seq_ + 1) dense_ = false;
  if (!first_seq_) first_seq_ = record.seq;
  last_seq_ = record.seq;
  if (record.version < 4) return Problem();  // versions 1 to 3 have no links
  if (record.outcome == kOutcomeStreamStarted) {
    if (record.start_seq != kNoStartSeq) {
      return Problem("a stream start record carries start_seq " + std::to_string(record.start_seq));
    }
    open_[record.seq] = record.request_id;
    return Problem();
  }
  if (record.start_seq == kNoStartSeq) return Problem();
  if (record.start_seq < 0 || static_cast<uint64_t>(record.start_seq) >= record.seq) {
    return Problem("start_seq " + std::to_string(record.start_seq) + " does not name an earlier record");
  }
  const uint64_t start = static_cast<uint64_t>(record.start_seq);
  if (auto it = open_.find(start); it != open_.end()) {
    const bool same_request = it->second == record.request_id;
    open_.erase(it);
    if (!same_request) return Problem("ends the stream started at seq " + std::to_string(start) + " by another request");
    return Problem();
  }
  if (dense_ && start >= *first_seq_) {
    return Problem("start_seq " + std::to_string(start) + " is not an open stream's start (not a start record, or ended already)");
  }
  return EndsAStartBeforeThePass(record);
}

Result<std::optional<std::string>> StreamLinks::EndsAStartBeforeThePass(const StreamLink& end) {
  using Problem = std::optional<std::string>;
  const uint64_t start = static_cast<uint64_t>(end.start_seq);
  if (!ended_before_pass_.insert(start).second) {
    return Problem("ends the stream started at seq " + std::to_string(start) + " a second time");
  }
  if (!lookup_) return Problem();
  KIMI_ASSIGN_OR_RETURN(std::optional<StreamLink> found, lookup_(start));
  if (!found || found->version < 4 || found->outcome != kOutcomeStreamStarted) {
    return Problem("start_seq " + std::to_string(start) + " is not a stream start record");
  }
  if (found->request_id != end.request_id) {
    return Problem("ends the stream started at seq " + std::to_string(start) + " by another request");
  }
  return Problem();
}

}  // namespace kimi::audit
