// TimeOrder: the rule that record timestamps never go backwards along the log. Records may
// share a millisecond (the writer commits many in one); an earlier time after a later one is a
// record the writer did not write in that place (the sink never writes one: it stamps a
// record with at least its predecessor's time, audit_sink.h). Every verifier (the log
// verifier, the export verifier, the daemon's start-up check) feeds it the records in
// sequence order.
//
// Thread safety: a value type; not synchronised.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kimi::audit {

class TimeOrder {
 public:
  TimeOrder() = default;
  // Starts after a record already checked (a verification that resumes at a checkpoint).
  explicit TimeOrder(int64_t previous_ms) : previous_(previous_ms) {}
  // The problem when time_ms is earlier than the previous record's; nullopt when in order.
  std::optional<std::string> Next(int64_t time_ms);
  std::optional<int64_t> previous() const { return previous_; }

 private:
  std::optional<int64_t> previous_;
};

}  // namespace kimi::audit
