// An operator's redaction pattern compiled for a matcher that runs in time linear in the text:
// a program of byte sets, ordered choices, jumps and assertions, run as a set of threads that
// advance together one byte at a time (at most one thread per instruction), never backtracking.
//
// Syntax: ECMAScript's, over bytes (as std::regex<char> reads it): literals, `.` (any byte but
// \n and \r), classes `[...]` / `[^...]` with ranges, escapes and `[:name:]`, the escapes
// \d \D \w \W \s \S \t \n \v \f \r \0 \cX \xHH \uHHHH (up to \u00FF) and escaped punctuation,
// \b \B, `^` (the text's start) and `$` (its end), groups `(...)` and `(?:...)`, alternation,
// quantifiers `* + ? {n} {n,} {n,m}` and their lazy forms. Matches are ECMAScript's: the
// leftmost, and among those the one the pattern's order of choices prefers.
// Refused, with InvalidArgument naming the construct: backreferences and lookahead (they need
// backtracking), named groups, a number of more than 9 digits, a quantifier with nothing to
// repeat, and a pattern longer than kMaxPatternBytes or whose program would exceed
// kMaxPatternStates byte instructions (counted repetitions are written out).
//
// Thread safety: a PatternProgram is immutable once compiled; searches share it.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::policy {

// The bounds of an operator's pattern: its length, and the byte instructions its quantifiers
// expand to.
inline constexpr size_t kMaxPatternBytes = 256;
inline constexpr size_t kMaxPatternStates = 2000;

struct PatternInstruction {
  enum class Op : uint8_t {
    kByte,    // consume one byte of byte_sets[set], go to the next instruction
    kSplit,   // go to `next` and to `other`, preferring `next`
    kJump,    // go to `next`
    kAssert,  // go to the next instruction when `assertion` holds here
    kMatch,
  };
  enum class Assertion : uint8_t { kWordBoundary, kNotWordBoundary, kTextStart, kTextEnd };
  Op op = Op::kMatch;
  Assertion assertion = Assertion::kTextStart;
  int32_t set = -1;
  int32_t next = -1;
  int32_t other = -1;
};

struct PatternProgram {
  std::vector<PatternInstruction> code;  // starts at 0
  std::vector<std::bitset<256>> byte_sets;
  // The bytes a match can start with; all 256 when the pattern can match empty text.
  std::bitset<256> first_bytes;
  // The bytes every match starts with (may be empty), to find where one can start quickly.
  std::string literal_prefix;
};

Result<PatternProgram> CompilePattern(std::string_view pattern);

// The bytes of \w, and those \b and \B look at on either side: ASCII letters, digits and '_'.
constexpr bool IsPatternWordByte(uint8_t b) {
  return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_';
}

// Follows jumps, splits (the preferred branch first) and the assertions `holds` accepts from
// `pc`, and calls reached(pc) for each byte and match instruction on the way, in the order the
// pattern prefers them. first_visit(pc) says whether pc is reached for the first time (and
// remembers it); `stack` is scratch. The one walk of the program's choices: the searcher's
// threads and the compiler's first bytes both take it.
template <class Holds, class FirstVisit, class Reached>
void FollowChoices(const PatternProgram& program, int32_t pc, std::vector<int32_t>* stack, Holds holds,
                   FirstVisit first_visit, Reached reached) {
  using Op = PatternInstruction::Op;
  stack->assign(1, pc);
  while (!stack->empty()) {
    const int32_t here = stack->back();
    stack->pop_back();
    if (!first_visit(here)) continue;
    const PatternInstruction& in = program.code[size_t(here)];
    switch (in.op) {
      case Op::kJump:
        stack->push_back(in.next);
        break;
      case Op::kSplit:
        stack->push_back(in.other);
        stack->push_back(in.next);
        break;
      case Op::kAssert:
        if (holds(in.assertion)) stack->push_back(in.next);
        break;
      case Op::kByte:
      case Op::kMatch:
        reached(here);
        break;
    }
  }
}

// A match at text[begin, end).
struct PatternMatch {
  size_t begin = 0;
  size_t end = 0;
};

// Appends the non-empty matches of `program` in `text`, in order, each found where the previous
// ended, as std::regex_iterator finds them (an empty match is skipped: the next search starts
// there, asking for a non-empty match, then one byte on). The work is bounded by
// `steps_per_byte` thread steps per byte of text: a search that would take more stops, and the
// offset it started from is returned (the text from there on was not searched); nullopt when
// the whole text was.
std::optional<size_t> FindPatternMatches(const PatternProgram& program, std::string_view text, size_t steps_per_byte,
                                         std::vector<PatternMatch>* out);

}  // namespace kimi::policy
