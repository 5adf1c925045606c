// Utf8Assembler: turns a byte stream cut at arbitrary points into whole UTF-8 characters.
//
// Token texts of a byte-level BPE vocabulary may end in the middle of a character. Push()
// returns the complete characters received so far and holds back a trailing incomplete
// sequence; invalid bytes become U+FFFD (one per maximal invalid subpart, as Unicode
// recommends), so the output is always valid UTF-8 and does not depend on how the input was
// cut.
//
// Owns the held-back bytes (at most 3). Thread safety: one instance per stream, one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kimi::chat {

class Utf8Assembler {
 public:
  // Appends bytes; returns the whole characters now available.
  std::string Push(std::string_view bytes);
  // Ends the stream: a held-back incomplete character becomes U+FFFD.
  std::string Flush();

  bool has_pending() const { return !pending_.empty(); }
  // Replacement characters written so far.
  size_t replacements() const { return replacements_; }

 private:
  std::string pending_;
  size_t replacements_ = 0;
};

}  // namespace kimi::chat
