// FindPatternMatches: the program run as threads in priority order over the text, one byte at
// a time, at most one thread per instruction (the first to reach it, which is the one the
// pattern prefers), so a search costs at most (bytes read) × (instructions) steps.
#include <utility>

#include "policy/pattern_program.h"

namespace kimi::policy {
namespace {

using Op = PatternInstruction::Op;
using Assertion = PatternInstruction::Assertion;

class Searcher {
 public:
  Searcher(const PatternProgram& program, std::string_view text, size_t max_steps)
      : program_(program), text_(text), max_steps_(max_steps), mark_(program.code.size(), 0) {}

  enum class Outcome { kMatch, kNone, kOutOfSteps };

  // The match ECMAScript's search from `from` gives. anchored: only a match starting at
  // `from`; non_empty: an empty match does not count.
  Outcome Search(size_t from, bool anchored, bool non_empty, PatternMatch* match) {
    const size_t n = text_.size();
    const bool skip = !anchored && program_.first_bytes.count() < 256;  // a match consumes a first byte
    current_.clear();
    bool matched = false;
    for (size_t at = from;; ++at) {
      if (!matched && (!anchored || at == from)) {
        if (current_.empty()) {
          if (skip) {
            at = NextStart(at);
            if (at == n) break;
          }
          NewList();
        }
        AddThread(&current_, 0, at, at);
      }
      if (current_.empty()) {
        if (matched || anchored || at == n) break;
        continue;  // no thread lives here (an assertion failed): a match may start further on
      }
      NewList();
      next_.clear();
      for (const Thread& t : current_) {
        ++steps_;
        const PatternInstruction& in = program_.code[size_t(t.pc)];
        if (in.op == Op::kMatch) {
          if (non_empty && t.start == at) continue;
          *match = {t.start, at};
          matched = true;
          break;  // every thread after this one is less preferred
        }
        if (at < n && program_.byte_sets[size_t(in.set)].test(uint8_t(text_[at]))) AddThread(&next_, in.next, t.start, at + 1);
      }
      if (steps_ > max_steps_) return Outcome::kOutOfSteps;
      std::swap(current_, next_);
      if (at == n) break;
    }
    return matched ? Outcome::kMatch : Outcome::kNone;
  }

 private:
  struct Thread {
    int32_t pc;
    size_t start;
  };

  void NewList() { ++generation_; }

  // The first offset from `at` on where a match can start (text_.size() when none).
  size_t NextStart(size_t at) const {
    const std::string& literal = program_.literal_prefix;
    if (!literal.empty()) {
      const size_t found = text_.find(literal, at);
      return found == std::string_view::npos ? text_.size() : found;
    }
    while (at < text_.size() && !program_.first_bytes.test(uint8_t(text_[at]))) ++at;
    return at;
  }

  bool Holds(Assertion a, size_t at) const {
    switch (a) {
      case Assertion::kTextStart:
        return at == 0;
      case Assertion::kTextEnd:
        return at == text_.size();
      case Assertion::kWordBoundary:
      case Assertion::kNotWordBoundary: {
        const bool before = at > 0 && IsPatternWordByte(uint8_t(text_[at - 1]));
        const bool after = at < text_.size() && IsPatternWordByte(uint8_t(text_[at]));
        return (before != after) == (a == Assertion::kWordBoundary);
      }
    }
    return false;
  }

  // The byte and match instructions reached from pc at text offset `at` (FollowChoices), appended
  // to *list, each once per list.
  void AddThread(std::vector<Thread>* list, int32_t pc, size_t start, size_t at) {
    FollowChoices(
        program_, pc, &stack_, [&](Assertion a) { return Holds(a, at); },
        [&](int32_t here) {
          if (mark_[size_t(here)] == generation_) return false;
          mark_[size_t(here)] = generation_;
          ++steps_;
          return true;
        },
        [&](int32_t here) { list->push_back({here, start}); });
  }

  const PatternProgram& program_;
  std::string_view text_;
  const size_t max_steps_;
  size_t steps_ = 0;
  std::vector<uint32_t> mark_;  // per instruction: the list it was last added to
  uint32_t generation_ = 0;
  std::vector<Thread> current_, next_;
  std::vector<int32_t> stack_;
};

}  // namespace

std::optional<size_t> FindPatternMatches(const PatternProgram& program, std::string_view text, size_t steps_per_byte,
                                         std::vector<PatternMatch>* out) {
  Searcher searcher(program, text, steps_per_byte * (text.size() + 1));
  PatternMatch m;
  for (size_t from = 0; from <= text.size();) {
    Searcher::Outcome found = searcher.Search(from, /*anchored=*/false, /*non_empty=*/false, &m);
    if (found == Searcher::Outcome::kOutOfSteps) return from;
    if (found == Searcher::Outcome::kNone) break;
    if (m.begin == m.end) {
      // As std::regex_iterator: a non-empty match at the same place, else one byte on.
      if (m.end == text.size()) break;
      from = m.end;
      found = searcher.Search(from, /*anchored=*/true, /*non_empty=*/true, &m);
      if (found == Searcher::Outcome::kOutOfSteps) return from;
      if (found == Searcher::Outcome::kNone) {
        ++from;
        continue;
      }
    }
    out->push_back(m);
    from = m.end;
  }
  return std::nullopt;
}

}  // namespace kimi::policy
