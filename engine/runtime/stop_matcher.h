// Stop strings over streamed text. Generated text arrives in pieces (one per token, as the
// detokeniser releases it) and a stop string may span several pieces, so text that could be
// the start of a stop string is held back until the next pieces decide: either the stop string
// completes (the text before it is released, the stop string and everything after it are
// dropped) or it cannot (the held text is released).
//
// Owns: the stop strings and the held-back text.
// Thread safety: one StopMatcher per request, used by one thread at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kimi::runtime {

class StopMatcher {
 public:
  // Empty stop strings are ignored.
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends `piece` to the stream and to *out the text that is now safe to show. Returns true
  // when a stop string has completed; *out then ends just before it, and the matcher must not be
  // pushed again.
  bool Push(std::string_view piece, std::string* out);

  // End of stream without a stop: appends the held-back text to *out.
  void Flush(std::string* out);

  bool stopped() const { return stopped_; }
  size_t held_bytes() const { return held_.size(); }

 private:
  // Bytes at the end of held_ that are a proper prefix of some stop string.
  size_t PossibleStopPrefix() const;

  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace kimi::runtime
