#include "audit/time_order.h"

namespace kimi::audit {

std::optional<std::string> TimeOrder::Next(int64_t time_ms) {
  std::optional<std::string> problem;
  if (previous_ && time_ms < *previous_) {
    problem = "time_ms " + std::to_string(time_ms) + " goes backwards (the record before it has " +
              std::to_string(*previous_) + ")";
  }
  // A backwards record does not lower the bar: the records after it are held to the highest time seen.
  if (!previous_ || time_ms > *previous_) previous_ = time_ms;
  return problem;
}

}  // namespace kimi::audit
