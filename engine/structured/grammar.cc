#include "structured/grammar.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <unordered_set>

namespace kimi::structured {

void GrammarBuilder::Limit(size_t max_states, size_t max_edges) {
  max_states_ = std::min(max_states_, max_states);
  max_edges_ = std::min(max_edges_, max_edges);
  if (grammar_.states.size() > max_states_) Exhaust(std::to_string(max_states_) + " grammar states");
  if (edges_ > max_edges_) Exhaust(std::to_string(max_edges_) + " grammar edges");
}

void GrammarBuilder::Exhaust(std::string what) {
  if (exhausted_by_.empty()) exhausted_by_ = std::move(what);
}

// One rule and state past the limit that every later request for a state or rule gets; no
// edge is added once exhausted, so nothing leads to it and it holds nothing.
int32_t GrammarBuilder::Placeholder() {
  Exhaust(std::to_string(max_states_) + " grammar states");
  if (placeholder_rule_ < 0) {
    placeholder_rule_ = static_cast<int32_t>(grammar_.rules.size());
    grammar_.rules.push_back(GrammarRule{"(past the grammar's limit)"});
    grammar_.rules.back().start = static_cast<int32_t>(grammar_.states.size());
    grammar_.states.emplace_back();
    grammar_.states.back().rule = placeholder_rule_;
  }
  return placeholder_rule_;
}

bool GrammarBuilder::TakeEdge() {
  if (exhausted()) return false;
  if (edges_ >= max_edges_) {
    Exhaust(std::to_string(max_edges_) + " grammar edges");
    return false;
  }
  ++edges_;
  return true;
}

int32_t GrammarBuilder::NewRule(std::string name) {
  if (exhausted() || grammar_.states.size() >= max_states_) return Placeholder();
  const int32_t rule = static_cast<int32_t>(grammar_.rules.size());
  grammar_.rules.push_back(GrammarRule{std::move(name)});
  grammar_.rules.back().start = NewState(rule);
  return rule;
}

int32_t GrammarBuilder::NewState(int32_t rule) {
  if (exhausted() || grammar_.states.size() >= max_states_) return RuleStart(Placeholder());
  grammar_.states.emplace_back();
  grammar_.states.back().rule = rule;
  return static_cast<int32_t>(grammar_.states.size() - 1);
}

void GrammarBuilder::AddBytes(int32_t from, const ByteSet& bytes, int32_t to) {
  if (bytes.Empty() || !TakeEdge()) return;
  grammar_.states[size_t(from)].bytes.push_back(ByteEdge{bytes, to});
}

void GrammarBuilder::AddLiteral(int32_t from, std::string_view text, int32_t to) {
  if (text.empty()) return AddEpsilon(from, to);
  int32_t at = from;
  for (size_t i = 0; i < text.size() && !exhausted(); ++i) {
    const int32_t next = i + 1 == text.size() ? to : NewState(RuleOf(from));
    ByteSet one;
    one.Add(static_cast<uint8_t>(text[i]));
    AddBytes(at, one, next);
    at = next;
  }
}

void GrammarBuilder::AddSpecial(int32_t from, int32_t token, int32_t to) {
  if (!TakeEdge()) return;
  grammar_.states[size_t(from)].specials.push_back(SpecialEdge{token, to});
}

void GrammarBuilder::AddEpsilon(int32_t from, EpsilonEdge edge) {
  if (!TakeEdge()) return;
  grammar_.states[size_t(from)].epsilons.push_back(edge);
}

void GrammarBuilder::AddCall(int32_t from, int32_t rule, int32_t return_state) {
  if (!TakeEdge()) return;
  grammar_.states[size_t(from)].calls.push_back(CallEdge{rule, return_state});
}

std::vector<int64_t> BytesToRuleEnd(const Grammar& g) {
  const size_t n = g.states.size();
  // Who waits on each state: a byte or special edge (cost 1), an epsilon (cost 0), or a call
  // whose return state it is (the call also waits on its callee's start).
  struct Waiter {
    int32_t state;
    int32_t cost;
    int32_t call;  // index in states[state].calls, or -1
  };
  std::vector<std::vector<Waiter>> waiters(n);
  std::vector<std::vector<std::pair<int32_t, int32_t>>> callers(g.rules.size());  // (state, call index)
  for (size_t s = 0; s < n; ++s) {
    const GrammarState& st = g.states[s];
    for (const ByteEdge& e : st.bytes) waiters[size_t(e.target)].push_back({int32_t(s), 1, -1});
    for (const SpecialEdge& e : st.specials) waiters[size_t(e.target)].push_back({int32_t(s), 1, -1});
    for (const EpsilonEdge& e : st.epsilons) waiters[size_t(e.target)].push_back({int32_t(s), 0, -1});
    for (size_t i = 0; i < st.calls.size(); ++i) {
      waiters[size_t(st.calls[i].return_state)].push_back({int32_t(s), 0, int32_t(i)});
      callers[size_t(st.calls[i].rule)].emplace_back(int32_t(s), int32_t(i));
    }
  }
  std::vector<int64_t> dist(n, kUnreachable);
  std::vector<bool> done(n, false);
  using Entry = std::pair<int64_t, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  auto offer = [&](int32_t state, int64_t d) {
    d = std::min(d, kUnreachable);
    if (d < dist[size_t(state)]) {
      dist[size_t(state)] = d;
      queue.emplace(d, state);
    }
  };
  for (size_t s = 0; s < n; ++s) {
    if (g.states[s].rule_end) offer(int32_t(s), 0);
  }
  while (!queue.empty()) {
    const auto [d, t] = queue.top();
    queue.pop();
    if (done[size_t(t)] || d != dist[size_t(t)]) continue;
    done[size_t(t)] = true;
    for (const Waiter& w : waiters[size_t(t)]) {
      if (w.call < 0) {
        offer(w.state, d + w.cost);
        continue;
      }
      const int32_t start = g.rules[size_t(g.states[size_t(w.state)].calls[size_t(w.call)].rule)].start;
      if (done[size_t(start)]) offer(w.state, dist[size_t(start)] + d);
    }
    const int32_t rule = g.states[size_t(t)].rule;
    if (g.rules[size_t(rule)].start != t) continue;
    for (const auto& [state, call] : callers[size_t(rule)]) {
      const int32_t ret = g.states[size_t(state)].calls[size_t(call)].return_state;
      if (done[size_t(ret)]) offer(state, d + dist[size_t(ret)]);
    }
  }
  return dist;
}

namespace {

// Removes every edge into a state that cannot reach the end of its rule (counters ignored: the
// compiler only emits counter guards that a loop can always satisfy).
void RemoveDeadEdges(const std::vector<int64_t>& to_end, Grammar* g) {
  auto dead = [&](int32_t state) { return to_end[size_t(state)] >= kUnreachable; };
  for (GrammarState& st : g->states) {
    std::erase_if(st.bytes, [&](const ByteEdge& e) { return dead(e.target); });
    std::erase_if(st.specials, [&](const SpecialEdge& e) { return dead(e.target); });
    std::erase_if(st.epsilons, [&](const EpsilonEdge& e) { return dead(e.target); });
    std::erase_if(st.calls, [&](const CallEdge& e) { return dead(g->rules[size_t(e.rule)].start) || dead(e.return_state); });
  }
}

// For each rule, the rules it can call before consuming a byte. Nullable rules (which can
// return without consuming) let the walk continue after their call.
std::vector<std::vector<int32_t>> CallsBeforeInput(const Grammar& g) {
  const size_t n = g.rules.size();
  std::vector<bool> nullable(n, false);
  std::vector<std::vector<int32_t>> calls(n);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      std::vector<int32_t> todo = {g.rules[r].start};
      std::unordered_set<int32_t> visited;
      std::vector<int32_t> called;
      bool reaches_end = false;
      while (!todo.empty()) {
        const int32_t s = todo.back();
        todo.pop_back();
        if (!visited.insert(s).second) continue;
        const GrammarState& st = g.states[size_t(s)];
        reaches_end = reaches_end || st.rule_end;
        for (const EpsilonEdge& e : st.epsilons) todo.push_back(e.target);
        for (const CallEdge& e : st.calls) {
          called.push_back(e.rule);
          if (nullable[size_t(e.rule)]) todo.push_back(e.return_state);
        }
      }
      std::sort(called.begin(), called.end());
      called.erase(std::unique(called.begin(), called.end()), called.end());
      if (reaches_end != nullable[r] || called != calls[r]) {
        nullable[r] = reaches_end;
        calls[r] = std::move(called);
        changed = true;
      }
    }
  }
  return calls;
}

// The first rule found on a cycle of calls made before any input, or -1.
int32_t LeftRecursiveRule(const Grammar& g) {
  const std::vector<std::vector<int32_t>> calls = CallsBeforeInput(g);
  std::vector<int> mark(g.rules.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<int32_t(int32_t)> visit = [&](int32_t r) -> int32_t {
    mark[size_t(r)] = 1;
    for (int32_t c : calls[size_t(r)]) {
      if (mark[size_t(c)] == 1) return c;
      if (mark[size_t(c)] == 0) {
        if (int32_t found = visit(c); found >= 0) return found;
      }
    }
    mark[size_t(r)] = 2;
    return -1;
  };
  for (size_t r = 0; r < g.rules.size(); ++r) {
    if (mark[r] == 0) {
      if (int32_t found = visit(static_cast<int32_t>(r)); found >= 0) return found;
    }
  }
  return -1;
}

// Keeps shared_key only on rules whose states are one contiguous run without calls: their
// masks then depend on nothing but the key and the state's offset in the run.
void CheckShareableRules(Grammar* g) {
  std::vector<int64_t> first(g->rules.size(), -1), last(g->rules.size(), -1), count(g->rules.size(), 0);
  std::vector<bool> calls(g->rules.size(), false);
  for (size_t s = 0; s < g->states.size(); ++s) {
    const size_t r = size_t(g->states[s].rule);
    if (first[r] < 0) first[r] = int64_t(s);
    last[r] = int64_t(s);
    ++count[r];
    calls[r] = calls[r] || !g->states[s].calls.empty();
  }
  for (size_t r = 0; r < g->rules.size(); ++r) {
    GrammarRule& rule = g->rules[r];
    if (calls[r] || first[r] != rule.start || last[r] - first[r] + 1 != count[r]) rule.shared_key.clear();
  }
}

Status CollectCounterBounds(Grammar* g) {
  for (GrammarState& st : g->states) {
    GrammarRule& rule = g->rules[size_t(st.rule)];
    for (const EpsilonEdge& e : st.epsilons) {
      for (int64_t bound : {e.at_least, e.below, e.saturate}) {
        if (bound <= 0 || bound == kUnbounded) continue;
        if (rule.bounds[0] == bound || rule.bounds[1] == bound) continue;
        if (rule.bounds[0] < 0) {
          rule.bounds[0] = bound;
        } else if (rule.bounds[1] < 0) {
          rule.bounds[1] = bound;
        } else {
          return Status::Internal("rule " + rule.name + " compares its counter with more than two bounds");
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const Grammar>> GrammarBuilder::Finish(int32_t root_rule, std::string_view what) {
  if (exhausted()) return Status::InvalidArgument(std::string(what) + " compiles to more than " + exhausted_by_);
  grammar_.root_rule = root_rule;
  std::vector<int64_t> to_end = BytesToRuleEnd(grammar_);
  if (to_end[size_t(grammar_.rules[size_t(root_rule)].start)] >= kUnreachable) {
    return Status::InvalidArgument(std::string(what) + " admits no value (its constraints contradict each other)");
  }
  RemoveDeadEdges(to_end, &grammar_);
  grammar_.bytes_to_rule_end = std::move(to_end);  // trimming removed only edges that led nowhere
  if (int32_t rule = LeftRecursiveRule(grammar_); rule >= 0) {
    return Status::InvalidArgument(std::string(what) + ": " + grammar_.rules[size_t(rule)].name +
                                   " refers to itself before any text ($ref cycle without an object or array in between)");
  }
  KIMI_RETURN_IF_ERROR(CollectCounterBounds(&grammar_));
  CheckShareableRules(&grammar_);
  return std::shared_ptr<const Grammar>(std::make_shared<Grammar>(std::move(grammar_)));
}

}  // namespace kimi::structured
