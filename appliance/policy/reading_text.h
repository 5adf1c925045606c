// ReadingText: a text as the redaction detectors read it, with the way back to its bytes.
//
// A reader, and a model, takes "４１１１ １１１１ １１１１ １１１１" (full-width digits),
// "4111 1111 1111 1111" with no-break spaces, digits of another script, a value with zero-width
// characters between its digits, or one spelled in invisible Unicode tag characters, for the
// value written in ASCII. The detectors scan ASCII structure, so each character that stands
// for an ASCII one is written as that character first:
//   - a decimal digit of any script (category Nd)            -> its digit '0'..'9'
//   - a tag character U+E0020..U+E007E                        -> the ASCII character it tags
//   - a default-ignorable character (zero-width space and joiners, word joiner, soft hyphen,
//     byte-order mark, bidi controls, variation selectors, the other tags), or a combining
//     mark that does not take space (category Mn, Me: an accent or keycap on a digit) -> nothing
//   - a line or paragraph separator, NEL                      -> '\n'
//   - any other white space (no-break, thin, ideographic)     -> ' '
//   - a dash (category Pd) or the minus sign                  -> '-'
//   - a character whose compatibility form (NFKC) is one printable ASCII character
//     (full-width Latin letters and punctuation, mathematical alphanumerics, circled and
//     superscript digits)                                     -> that character
// Every other character, and every byte that is not UTF-8, stays as it is. Text that is all
// ASCII is read as it is, without a copy.
//
// Thread safety: an instance is immutable after construction; the character table is built
// once, on first use, under C++'s static-initialisation guarantee.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kimi::policy {

class ReadingText {
 public:
  // `original` must outlive the instance.
  explicit ReadingText(std::string_view original);

  // The text the detectors read.
  std::string_view text() const { return changes_.empty() ? original_ : folded_; }
  std::string_view original() const { return original_; }

  // The original bytes that text()[begin, end) were read from, widened to whole characters
  // of the original (a finding that starts or ends inside a multi-byte character takes it
  // all). Characters read as nothing between begin and end are inside the range.
  // Precondition: begin <= end <= text().size().
  std::pair<size_t, size_t> OriginalRange(size_t begin, size_t end) const;

 private:
  size_t OriginalAt(size_t position) const;

  // Where the read text's offsets stop running beside the original's: from `read_at` on (up to
  // the next change), read offset read_at + n is original offset original_at + n.
  struct Change {
    size_t read_at;
    size_t original_at;
  };
  std::string_view original_;
  std::string folded_;
  std::vector<Change> changes_;  // in order; empty when the text is read as it is
};

// The text as the detectors read it, on its own: what a hash of a found value is taken over,
// so that one value written in several ways gives one token.
std::string ReadAsDetectorsDo(std::string_view text);

}  // namespace kimi::policy
