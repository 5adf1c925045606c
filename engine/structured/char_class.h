// Sets of Unicode code points (character classes) and how one character of a class is spelled
// in bytes: raw UTF-8, or inside a JSON string (escaping ", \ and control characters the way
// json.dumps does). Used by the regular-expression and schema compilers.
//
// A class's spelling is built once as a small byte automaton (CharBytes) whose shared prefixes
// and suffixes are merged, so one character of a class costs the states of that automaton (15
// for `.` in a string, 3 for a whole script's range, 4 for every other character of 1,200 CJK
// ones) rather than states per range, and placing it on many edges copies it without working
// it out again.
//
// Owns nothing. Thread safety: values and pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

#include "structured/grammar.h"

namespace kimi::structured {

struct CodePointRange {
  char32_t lo;
  char32_t hi;  // inclusive
  auto operator<=>(const CodePointRange&) const = default;
};

// Sorted, disjoint, non-adjacent ranges; never contains surrogates (U+D800..U+DFFF).
class CharClass {
 public:
  CharClass() = default;
  static CharClass Of(char32_t lo, char32_t hi);
  static CharClass AnyChar();  // every scalar value
  // The union of ranges given in any order (overlapping or not), normalised once: a class of
  // n ranges costs O(n log n), not a sort per range.
  static CharClass FromRanges(std::vector<CodePointRange> ranges);

  // O(1) when the range lies past every range so far (ascending input), O(size) otherwise.
  void Add(char32_t lo, char32_t hi);
  void Add(const CharClass& other);  // O(size + other's size)
  // universe minus this class.
  CharClass ComplementWithin(const CharClass& universe) const;
  bool Contains(char32_t c) const;
  bool Empty() const { return ranges_.empty(); }
  const std::vector<CodePointRange>& ranges() const { return ranges_; }
  auto operator<=>(const CharClass&) const = default;

 private:
  std::vector<CodePointRange> ranges_;
};

// One character of a class as bytes: an automaton from node 0 (where the character starts)
// to node 1 (where it ends) through `inner` nodes numbered 2..inner+1. Byte sets leaving a
// node are disjoint when the class came from code points, so the automaton is deterministic.
struct CharBytes {
  struct Edge {
    int32_t from;
    ByteSet bytes;
    int32_t to;
  };
  int32_t inner = 0;
  std::vector<Edge> edges;
};
// `chars` as raw UTF-8.
CharBytes Utf8Bytes(const CharClass& chars);
// `chars` as written inside a JSON string: ", \ and controls escaped (\", \\, \n, \r, \t, \b,
// \f, other controls as \u00xx), everything else raw UTF-8.
CharBytes JsonStringBytes(const CharClass& chars);
// A copy of `bytes` from `from` to `to`, through bytes.inner new states of from's rule.
void AddCharBytes(GrammarBuilder* builder, int32_t from, const CharBytes& bytes, int32_t to);

// One character of `chars` as it is written inside a JSON string (JsonStringBytes).
void AddJsonStringChar(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to);

}  // namespace kimi::structured
