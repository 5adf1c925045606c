// A grammar over bytes (and a few whole special tokens) that structured output compiles JSON
// Schemas into: a set of rules, each a small automaton whose edges consume one byte from a
// set, consume one special token, call another rule (a pushdown edge), or move without
// consuming (epsilon edges, which may test and update the rule's counter).
//
// The counter is what keeps long bounds cheap: one per rule activation (saved across calls),
// reset when the rule is entered, tested by `at_least`/`below` guards and bumped by
// kIncrement edges. A string with maxLength 5000000 or an array with minItems 3 stays a handful
// of states. Each rule compares its counter with at most two constants (checked in Finish()).
//
// GrammarBuilder assembles a grammar; Finish() removes every state that cannot reach the end
// of its rule (so a matcher never allows a step into a dead end), refuses left recursion (a
// rule that can call itself before consuming anything) and freezes the result. A builder may
// be limited in states and edges (Limit()): every state and edge is counted where it is made,
// so no way of building escapes the bound, and past it the builder stops growing.
//
// Owns: states and rules. Thread safety: a finished Grammar is immutable and shared between
// threads; a GrammarBuilder is used by one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::structured {

inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
// Bytes to the end of a rule from a state that cannot reach it: further than any value needs.
inline constexpr int64_t kUnreachable = int64_t(1) << 40;

// A set of byte values.
struct ByteSet {
  uint64_t words[4] = {0, 0, 0, 0};
  void Add(uint8_t b) { words[b >> 6] |= uint64_t(1) << (b & 63); }
  void AddRange(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) Add(static_cast<uint8_t>(b));
  }
  bool Has(uint8_t b) const { return (words[b >> 6] >> (b & 63)) & 1; }
  bool Empty() const { return (words[0] | words[1] | words[2] | words[3]) == 0; }
  auto operator<=>(const ByteSet&) const = default;
};

enum class CounterAction : uint8_t { kNone, kReset, kIncrement };

struct ByteEdge {
  ByteSet bytes;
  int32_t target;
};
// Passable when at_least <= counter < below; then applies the action. An increment stops at
// `saturate` (a counter past every bound it is compared with behaves the same, and a bounded
// counter keeps masks cacheable).
struct EpsilonEdge {
  int32_t target;
  int64_t at_least = 0;
  int64_t below = kUnbounded;
  CounterAction action = CounterAction::kNone;
  int64_t saturate = kUnbounded;
};
struct CallEdge {
  int32_t rule;
  int32_t return_state;
};
struct SpecialEdge {
  int32_t token;
  int32_t target;
};

struct GrammarState {
  int32_t rule = -1;
  bool rule_end = false;  // reaching it returns to the caller
  std::vector<ByteEdge> bytes;
  std::vector<SpecialEdge> specials;
  std::vector<EpsilonEdge> epsilons;
  std::vector<CallEdge> calls;
  bool Consumes() const { return !bytes.empty() || !specials.empty(); }
};

struct GrammarRule {
  std::string name;  // for messages and dumps
  int32_t start = -1;
  // The constants the rule's counter is compared with (at most two; -1: none).
  int64_t bounds[2] = {-1, -1};
  // Non-empty when the rule is self-contained (no calls, contiguous states) and built the same
  // way wherever this key appears, so its masks can be shared by every grammar over a
  // vocabulary ("string[0,inf]", a number pattern...).
  std::string shared_key;
};

struct Grammar {
  std::vector<GrammarState> states;
  std::vector<GrammarRule> rules;
  int32_t root_rule = -1;
  // Per state: the fewest bytes (a special token counting as one) to the end of its rule,
  // counters ignored; kUnreachable when it cannot get there. Filled by Finish().
  std::vector<int64_t> bytes_to_rule_end;
};

// Computes Grammar::bytes_to_rule_end in O(edges log states): a shortest-path search from the
// rule ends backwards, where a call edge costs the callee's shortest text plus the return
// state's (Knuth's generalisation of Dijkstra's algorithm), so long literal chains cost no more
// than short ones.
std::vector<int64_t> BytesToRuleEnd(const Grammar& grammar);

class GrammarBuilder {
 public:
  // At most max_states states and max_edges edges (of every kind) from now on; a lower limit
  // set earlier stays. Past either, the builder is exhausted(): it adds nothing more (a state
  // or rule asked for then is one placeholder that nothing reaches), and Finish() refuses the
  // grammar. Code that builds in loops checks exhausted() (or state_room()) to stop early.
  void Limit(size_t max_states, size_t max_edges);
  bool exhausted() const { return !exhausted_by_.empty(); }
  // States that may still be made before the limit.
  size_t state_room() const { return grammar_.states.size() >= max_states_ ? 0 : max_states_ - grammar_.states.size(); }
  size_t max_states() const { return max_states_; }
  size_t max_edges() const { return max_edges_; }
  size_t num_edges() const { return edges_; }

  int32_t NewRule(std::string name);  // with its start state
  int32_t NewState(int32_t rule);
  int32_t RuleStart(int32_t rule) const { return grammar_.rules[size_t(rule)].start; }
  int32_t RuleOf(int32_t state) const { return grammar_.states[size_t(state)].rule; }
  void MarkEnd(int32_t state) {
    if (!exhausted()) grammar_.states[size_t(state)].rule_end = true;
  }

  void AddBytes(int32_t from, const ByteSet& bytes, int32_t to);
  // A chain of single bytes through new states of from's rule.
  void AddLiteral(int32_t from, std::string_view text, int32_t to);
  void AddSpecial(int32_t from, int32_t token, int32_t to);
  void AddEpsilon(int32_t from, int32_t to) { AddEpsilon(from, EpsilonEdge{to}); }
  void AddEpsilon(int32_t from, EpsilonEdge edge);
  void AddCall(int32_t from, int32_t rule, int32_t return_state);
  // Declares that the rule's structure depends on `key` alone (see GrammarRule::shared_key);
  // Finish() drops the key when the rule calls others or its states are not contiguous.
  void MarkShareable(int32_t rule, std::string key) {
    if (!exhausted()) grammar_.rules[size_t(rule)].shared_key = std::move(key);
  }

  size_t num_states() const { return grammar_.states.size(); }
  const std::string& grammar_rule_name(int32_t rule) const { return grammar_.rules[size_t(rule)].name; }

  // Trims, checks and freezes. Errors: InvalidArgument when the builder is exhausted (naming
  // the limit), the root rule cannot produce any text ("admits no value") or a rule is
  // left-recursive; `what` names the input in messages.
  Result<std::shared_ptr<const Grammar>> Finish(int32_t root_rule, std::string_view what);

 private:
  // Counts one edge; false (and exhausted) past the limit.
  bool TakeEdge();
  void Exhaust(std::string what);
  int32_t Placeholder();

  Grammar grammar_;
  size_t max_states_ = std::numeric_limits<size_t>::max();
  size_t max_edges_ = std::numeric_limits<size_t>::max();
  size_t edges_ = 0;
  std::string exhausted_by_;  // the limit passed ("200000 grammar states"), empty while within
  int32_t placeholder_rule_ = -1;
};

}  // namespace kimi::structured
