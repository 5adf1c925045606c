// Sets of Unicode code points (character classes) and how one character of a class is spelled
// in bytes: raw UTF-8, or inside a JSON string (escaping ", \ and control characters the way
// json.dumps does). Used by the regular-expression and schema compilers.
//
// Owns nothing. Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "structured/grammar.h"

namespace kimi::structured {

struct CodePointRange {
  char32_t lo;
  char32_t hi;  // inclusive
};

// Sorted, disjoint, non-adjacent ranges; never contains surrogates (U+D800..U+DFFF).
class CharClass {
 public:
  CharClass() = default;
  static CharClass Of(char32_t lo, char32_t hi);
  static CharClass AnyChar();  // every scalar value

  void Add(char32_t lo, char32_t hi);
  void Add(const CharClass& other);
  // universe minus this class.
  CharClass ComplementWithin(const CharClass& universe) const;
  bool Contains(char32_t c) const;
  bool Empty() const { return ranges_.empty(); }
  const std::vector<CodePointRange>& ranges() const { return ranges_; }

 private:
  std::vector<CodePointRange> ranges_;
};

// One character of `chars` as raw UTF-8 bytes, through new states of from's rule.
void AddUtf8Char(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to);
// One character of `chars` as it is written inside a JSON string: ", \ and controls escaped
// (\", \\, \n, \r, \t, \b, \f, other controls as \u00xx), everything else raw UTF-8.
void AddJsonStringChar(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to);

}  // namespace kimi::structured
