// The regular-expression subset that structured output compiles into grammars: JSON Schema's
// `pattern` (ECMA-262 syntax, a search: unanchored unless ^ and $ say otherwise), and the
// fixed patterns of `format` and number ranges.
//
// Supported: literals (UTF-8), `.`, classes `[...]` with ranges and `^` negation, the escapes
// \d \w \s \D \W \S \t \n \r \f \v \0 \xHH \uHHHH and escaped punctuation, groups `(...)` and
// `(?:...)`, alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (a lazy `?` suffix is accepted:
// laziness does not change the language), `^` at the very start and `$` at the very end.
// Refused (InvalidArgument naming the construct): backreferences, lookaround, named groups,
// \b \B \p \P, anchors elsewhere, and expressions past the bounds below: longer than
// kMaxRegexPatternBytes, groups nested deeper than kMaxRegexGroupDepth, a repetition count above
// kMaxRegexRepeat, an automaton of more than kMaxRegexStates states, or one whose edges carry
// more than kMaxRegexEdgeRanges character ranges in all (edges times the ranges of their
// classes: what placing the classes on the edges costs). Parsing and building are bounded by
// them (no recursion deeper than the group nesting).
//
// Classes that contain negated shorthands (\D \W \S, or \d \w \s inside [^...]) are taken within
// ASCII, because validators disagree on their Unicode meaning; `.` is every character but line
// terminators.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "structured/char_class.h"

namespace kimi::structured {

inline constexpr size_t kMaxRegexStates = 20000;
inline constexpr size_t kMaxRegexEdgeRanges = 200000;
inline constexpr size_t kMaxRegexPatternBytes = 4096;
inline constexpr int kMaxRegexGroupDepth = 32;
inline constexpr int64_t kMaxRegexRepeat = 1000;

// A nondeterministic automaton over characters. Each distinct class is held once, and edges
// refer to it by index, so a class repeated on thousands of edges is neither copied nor, by
// the compilers that embed the automaton, worked out again.
struct CharNfa {
  struct Edge {
    int32_t chars;  // index in classes
    int32_t target;
  };
  std::vector<CharClass> classes;
  struct State {
    std::vector<Edge> edges;
    std::vector<int32_t> epsilons;
  };
  std::vector<State> states;
  int32_t start = 0;
  int32_t accept = 0;
};

// The automaton of every string the pattern matches somewhere (search semantics).
Result<CharNfa> CompileRegex(std::string_view pattern);

}  // namespace kimi::structured
