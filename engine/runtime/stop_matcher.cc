// StopMatcher: earliest stop string in the held text, else hold back the longest tail that a
// stop string could still start with.
#include "runtime/stop_matcher.h"

#include <algorithm>

namespace kimi::runtime {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

bool StopMatcher::Push(std::string_view piece, std::string* out) {
  if (stopped_) return true;
  held_.append(piece);
  size_t first = std::string::npos;
  for (const auto& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    out->append(held_, 0, first);
    held_.clear();
    stopped_ = true;
    return true;
  }
  // A stop string is valid UTF-8 and cannot begin with a continuation byte, so the tail kept
  // back always starts on a character boundary and the released text is whole characters.
  const size_t keep = PossibleStopPrefix();
  out->append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return false;
}

void StopMatcher::Flush(std::string* out) {
  if (!stopped_) out->append(held_);
  held_.clear();
}

size_t StopMatcher::PossibleStopPrefix() const {
  size_t longest = 0;
  for (const auto& stop : stops_) {
    const size_t most = std::min(stop.size() - 1, held_.size());
    for (size_t n = most; n > longest; --n) {
      if (std::string_view(held_).substr(held_.size() - n) == std::string_view(stop).substr(0, n)) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace kimi::runtime
