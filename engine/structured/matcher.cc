#include "structured/matcher.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace kimi::structured {
namespace {

constexpr int32_t kMaxMemoizedSets = 1 << 16;
// Subtrees with more nodes than this are checked for being allowed whole.
constexpr int32_t kSkipAtLeast = 32;
// Further than any value can need: unreachable.
constexpr int64_t kFar = kUnreachable;

void SetBit(std::vector<uint64_t>* words, int32_t id) {
  if (id >= 0 && size_t(id >> 6) < words->size()) (*words)[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
}

// What a kept mask holds, with the map's node and the shared pointer's block.
size_t MaskBytes(const LocalMask& mask) {
  return sizeof(LocalMask) + 128 + mask.words.capacity() * sizeof(uint64_t) + mask.leaves_rule.capacity() * sizeof(int32_t);
}

// Whether `bytes` more fit beside `used` under `limit`, without overflow.
bool Fits(size_t used, size_t bytes, size_t limit) { return bytes <= limit - std::min(used, limit); }

}  // namespace

bool MaskBudget::TryTake(size_t bytes) {
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (!Fits(used, bytes, limit_)) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void MaskBudget::Give(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

MaskCache::~MaskCache() {
  if (budget_) budget_->Give(bytes_);
}

bool MaskCache::TakeLocked(size_t bytes) {
  if (!Fits(bytes_, bytes, max_bytes_)) return false;
  if (budget_ && !budget_->TryTake(bytes)) return false;
  bytes_ += bytes;
  return true;
}

std::shared_ptr<const LocalMask> MaskCache::Find(const MaskCacheKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

void MaskCache::Insert(const MaskCacheKey& key, std::shared_ptr<const LocalMask> mask) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.contains(key) || !TakeLocked(MaskBytes(*mask))) return;
  entries_.emplace(key, std::move(mask));
}

std::shared_ptr<const LocalMask> MaskCache::FindShared(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shared_entries_.find(key);
  return it == shared_entries_.end() ? nullptr : it->second;
}

void MaskCache::InsertShared(const std::string& key, std::shared_ptr<const LocalMask> mask) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shared_entries_.size() >= kMaxSharedEntries || shared_entries_.contains(key)) return;
  if (!TakeLocked(MaskBytes(*mask) + key.size())) return;
  shared_entries_.emplace(key, std::move(mask));
}

size_t MaskCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t MaskCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                               std::shared_ptr<MaskCache> cache, std::vector<int32_t> end_tokens, MatcherBounds bounds)
    : grammar_(std::move(grammar)),
      trie_(std::move(trie)),
      cache_(std::move(cache)),
      end_tokens_(std::move(end_tokens)),
      bounds_(bounds) {
  const int32_t root_start = grammar_->rules[size_t(grammar_->root_rule)].start;
  current_ = Close({Config{root_start, kRealBottom, 0}});
}

void GrammarMatcher::Stop(std::string why) {
  if (status_.ok()) status_ = Status::InvalidArgument(std::move(why));
}

void GrammarMatcher::BeginCall() {
  visits_ = 0;
  if (held_ > bounds_.held && status_.ok()) KeepOnlyCurrentSet();
  held_at_call_ = held_;
}

void GrammarMatcher::KeepOnlyCurrentSet() {
  std::vector<Config> configs;
  bool complete = false, left_start = false;
  if (current_ >= 0) {
    configs = std::move(sets_[size_t(current_)].configs);
    complete = sets_[size_t(current_)].complete;
    left_start = sets_[size_t(current_)].left_start;
  }
  const std::vector<Frame> old_frames = std::move(frames_);
  frames_.clear();
  frame_ids_.clear();
  sets_.clear();
  set_ids_.clear();
  held_ = 0;
  if (current_ < 0) return;
  // Each stack is interned again from its bottom frame up, without recursion (stacks may be
  // as deep as the output is long).
  std::unordered_map<int32_t, int32_t> moved;
  auto move = [&](int32_t stack) {
    std::vector<int32_t> chain;
    for (int32_t s = stack; s >= 0 && !moved.contains(s); s = old_frames[size_t(s)].parent) chain.push_back(s);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Frame& f = old_frames[size_t(*it)];
      moved[*it] = InternFrame(f.parent < 0 ? f.parent : moved.at(f.parent), f.return_state, f.count);
    }
    return stack < 0 ? stack : moved.at(stack);
  };
  for (Config& c : configs) c.stack = move(c.stack);
  current_ = InternSet(std::move(configs), complete, left_start);
}

int32_t GrammarMatcher::InternFrame(int32_t parent, int32_t return_state, int64_t count) {
  std::string key(16, '\0');
  std::memcpy(key.data(), &parent, 4);
  std::memcpy(key.data() + 4, &return_state, 4);
  std::memcpy(key.data() + 8, &count, 8);
  auto [it, fresh] = frame_ids_.try_emplace(std::move(key), int32_t(frames_.size()));
  if (fresh) {
    frames_.push_back(Frame{parent, return_state, count});
    ++held_;
  }
  return it->second;
}

int32_t GrammarMatcher::InternSet(std::vector<Config> configs, bool complete, bool left_start) {
  std::sort(configs.begin(), configs.end());
  configs.erase(std::unique(configs.begin(), configs.end()), configs.end());
  std::string key(configs.size() * sizeof(Config) + 1, '\0');
  if (!configs.empty()) std::memcpy(key.data(), configs.data(), configs.size() * sizeof(Config));
  key.back() = char((complete ? 1 : 0) | (left_start ? 2 : 0));
  auto [it, fresh] = set_ids_.try_emplace(std::move(key), int32_t(sets_.size()));
  if (fresh) {
    held_ += configs.size();
    sets_.emplace_back();
    sets_.back().configs = std::move(configs);
    sets_.back().complete = complete;
    sets_.back().left_start = left_start;
  }
  return it->second;
}

int32_t GrammarMatcher::Close(std::vector<Config> seeds) {
  struct ConfigHash {
    size_t operator()(const Config& c) const {
      return std::hash<int64_t>()((int64_t(c.state) << 32) ^ (int64_t(c.stack) << 12) ^ c.count);
    }
  };
  std::unordered_set<Config, ConfigHash> visited;
  std::vector<Config> out;
  bool complete = false, left_start = false;
  std::vector<Config>& todo = seeds;
  while (!todo.empty() && status_.ok()) {
    if (visited.size() >= bounds_.parses_at_once) {
      Stop("the output grammar is too ambiguous to follow: more than " + std::to_string(bounds_.parses_at_once) +
           " parses of the output are open at once (alternatives such as anyOf or oneOf branches that accept the same "
           "text, nested); make the alternatives tell themselves apart by their first characters");
    } else if (++visits_ > bounds_.visits_per_call || held_ - held_at_call_ > bounds_.added_per_call) {
      Stop("the output grammar is too ambiguous to follow: one token needed more than " +
           std::to_string(visits_ > bounds_.visits_per_call ? bounds_.visits_per_call : bounds_.added_per_call) +
           (visits_ > bounds_.visits_per_call ? " parse steps" : " new parse states"));
    }
    if (!status_.ok()) break;
    const Config c = todo.back();
    todo.pop_back();
    if (!visited.insert(c).second) continue;
    const GrammarState& st = grammar_->states[size_t(c.state)];
    if (st.Consumes()) out.push_back(c);
    if (st.rule_end) {
      if (c.stack == kRealBottom) {
        complete = true;
      } else if (c.stack == kLocalBottom) {
        left_start = true;
      } else {
        const Frame f = frames_[size_t(c.stack)];
        todo.push_back(Config{f.return_state, f.parent, f.count});
      }
    }
    for (const EpsilonEdge& e : st.epsilons) {
      if (c.count < e.at_least || c.count >= e.below) continue;
      int64_t count = c.count;
      if (e.action == CounterAction::kReset) count = 0;
      if (e.action == CounterAction::kIncrement) count = std::min(count + 1, e.saturate);
      todo.push_back(Config{e.target, c.stack, count});
    }
    for (const CallEdge& call : st.calls) {
      todo.push_back(Config{grammar_->rules[size_t(call.rule)].start, InternFrame(c.stack, call.return_state, c.count), 0});
    }
  }
  if (!status_.ok() || (out.empty() && !complete && !left_start)) return kDead;
  return InternSet(std::move(out), complete, left_start);
}

int32_t GrammarMatcher::Step(int32_t set, uint8_t byte) {
  // Past kMaxMemoizedSets sets (a very long counted string makes a new set per character)
  // new sets are stepped without a table, so memory stays bounded.
  if (sets_[size_t(set)].next.empty() && set < kMaxMemoizedSets) sets_[size_t(set)].next.assign(256, kUnknown);
  const bool memoized = !sets_[size_t(set)].next.empty();
  if (memoized) {
    if (int32_t known = sets_[size_t(set)].next[byte]; known != kUnknown) return known;
  }
  std::vector<Config> seeds;
  for (const Config& c : sets_[size_t(set)].configs) {
    for (const ByteEdge& e : grammar_->states[size_t(c.state)].bytes) {
      if (e.bytes.Has(byte)) seeds.push_back(Config{e.target, c.stack, c.count});
    }
  }
  const int32_t next = seeds.empty() ? kDead : Close(std::move(seeds));
  if (memoized) sets_[size_t(set)].next[byte] = next;
  return next;
}

int32_t GrammarMatcher::StepSpecial(int32_t set, int32_t token) {
  std::vector<Config> seeds;
  for (const Config& c : sets_[size_t(set)].configs) {
    for (const SpecialEdge& e : grammar_->states[size_t(c.state)].specials) {
      if (e.token == token) seeds.push_back(Config{e.target, c.stack, c.count});
    }
  }
  return seeds.empty() ? kDead : Close(std::move(seeds));
}

bool GrammarMatcher::Admits(int32_t set, ByteBudget* budget) {
  if (budget == nullptr) return true;
  const int64_t left = Remaining(set);
  budget->fewest_after = std::min(budget->fewest_after, left);
  budget->most_after = std::max(budget->most_after, left);
  return left <= budget->limit;
}

void GrammarMatcher::Walk(int32_t from_node, int32_t set, uint64_t* words, std::vector<int32_t>* leaves_rule, ByteBudget* budget) {
  const std::vector<TrieNode>& nodes = trie_->nodes();
  struct Level {
    int32_t end;
    int32_t set;
  };
  std::vector<Level> levels = {{nodes[size_t(from_node)].subtree_end, set}};
  int32_t i = from_node + 1;
  while (i < levels.front().end) {
    while (i >= levels.back().end) levels.pop_back();
    const TrieNode& node = nodes[size_t(i)];
    const int32_t next = Step(levels.back().set, node.byte);
    if (next == kDead) {
      i = node.subtree_end;
      continue;
    }
    if (node.token >= 0 && Admits(next, budget)) words[node.token >> 6] |= uint64_t(1) << (node.token & 63);
    const ConfigSet& s = sets_[size_t(next)];
    if (leaves_rule != nullptr && s.left_start) leaves_rule->push_back(i);
    if (s.configs.empty()) {
      i = node.subtree_end;
      continue;
    }
    // A large subtree whose every byte leads back to this set (string contents, mostly) is
    // allowed whole, without stepping through it.
    if (node.subtree_end - i > kSkipAtLeast && !s.left_start) {
      if (LoopsOver(next, trie_->bytes_below(i))) {
        // Every token below ends in `next` itself.
        if (Admits(next, budget)) {
          for (int32_t token : trie_->tokens_below(i)) words[token >> 6] |= uint64_t(1) << (token & 63);
        }
        i = node.subtree_end;
        continue;
      }
    }
    levels.push_back({node.subtree_end, next});
    ++i;
  }
}

bool GrammarMatcher::LoopsOver(int32_t set, const ByteSet& bytes) {
  for (int w = 0; w < 4; ++w) {
    for (uint64_t bits = bytes.words[w]; bits != 0; bits &= bits - 1) {
      if (Step(set, uint8_t(w * 64 + __builtin_ctzll(bits))) != set) return false;
    }
  }
  return true;
}

MaskCacheKey GrammarMatcher::KeyFor(const Config& c) const {
  const GrammarRule& rule = grammar_->rules[size_t(grammar_->states[size_t(c.state)].rule)];
  const int64_t far = int64_t(trie_->max_token_bytes()) + 1;
  MaskCacheKey key{c.state, {0, 0}};
  for (int i = 0; i < 2; ++i) {
    if (rule.bounds[i] >= 0) key.distance[i] = std::clamp<int64_t>(rule.bounds[i] - c.count, 0, far);
  }
  return key;
}

std::shared_ptr<const LocalMask> GrammarMatcher::LocalMaskFor(const Config& c) {
  const MaskCacheKey key = KeyFor(c);
  if (std::shared_ptr<const LocalMask> hit = cache_->Find(key)) return hit;
  const GrammarRule& rule = grammar_->rules[size_t(grammar_->states[size_t(c.state)].rule)];
  MaskCache* shared = rule.shared_key.empty() ? nullptr : cache_->vocabulary_wide();
  std::string shared_key;
  if (shared != nullptr) {
    shared_key = rule.shared_key + '\0' + std::to_string(c.state - rule.start) + ',' + std::to_string(key.distance[0]) + ',' +
                 std::to_string(key.distance[1]);
    if (std::shared_ptr<const LocalMask> hit = shared->FindShared(shared_key)) {
      cache_->Insert(key, hit);
      return hit;
    }
  }
  auto mask = std::make_shared<LocalMask>();
  mask->words.assign(size_t(trie_->vocab_size() + 63) / 64, 0);
  const int32_t start = Close({Config{c.state, kLocalBottom, c.count}});
  if (start != kDead) Walk(0, start, mask->words.data(), &mask->leaves_rule);
  if (!status_.ok()) return mask;  // cut short: never shared
  cache_->Insert(key, mask);
  if (shared != nullptr) shared->InsertShared(shared_key, mask);
  return mask;
}

void GrammarMatcher::AllowedTokens(std::vector<uint64_t>* words) {
  BeginCall();
  words->assign(size_t(trie_->vocab_size() + 63) / 64, 0);
  if (finished_ || current_ == kDead || !status_.ok()) return;
  const std::vector<Config> configs = sets_[size_t(current_)].configs;
  for (const Config& c : configs) {
    const GrammarState& st = grammar_->states[size_t(c.state)];
    for (const SpecialEdge& e : st.specials) SetBit(words, e.token);
    if (st.bytes.empty()) continue;
    std::shared_ptr<const LocalMask> local = LocalMaskFor(c);
    for (size_t w = 0; w < words->size(); ++w) (*words)[w] |= local->words[w];
    if (local->leaves_rule.empty() || c.stack == kRealBottom) continue;
    // Tokens that run past the end of c's rule continue in the caller's frame.
    const Frame f = frames_[size_t(c.stack)];
    const int32_t caller = Close({Config{f.return_state, f.parent, f.count}});
    if (caller == kDead) continue;
    for (int32_t node : local->leaves_rule) Walk(node, caller, words->data(), nullptr);
  }
  if (!status_.ok()) return words->assign(words->size(), 0);
  if (sets_[size_t(current_)].complete) {
    for (int32_t id : end_tokens_) SetBit(words, id);
  }
}

Status GrammarMatcher::Advance(int32_t token) {
  BeginCall();
  if (!status_.ok()) return status_;
  if (finished_ || current_ == kDead) return Status::InvalidArgument("the constrained output has already ended");
  if (std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end()) {
    if (!sets_[size_t(current_)].complete) {
      return Status::InvalidArgument("end token " + std::to_string(token) + " before the value is complete");
    }
    finished_ = true;
    return Status::OK();
  }
  const int32_t next = StepToken(current_, token);
  if (!status_.ok()) return status_;
  if (next == kDead) return Status::InvalidArgument("token " + std::to_string(token) + " is not allowed by the output grammar");
  current_ = next;
  return Status::OK();
}

int32_t GrammarMatcher::StepToken(int32_t set, int32_t token) {
  const std::string_view bytes = trie_->TokenBytes(token);
  if (bytes.empty()) return StepSpecial(set, token);
  for (char b : bytes) {
    set = Step(set, static_cast<uint8_t>(b));
    if (set == kDead) break;
  }
  return set;
}

bool GrammarMatcher::complete() const { return finished_ || (current_ != kDead && sets_[size_t(current_)].complete); }

bool GrammarMatcher::AcceptsBytes(std::string_view bytes, bool require_complete) {
  BeginCall();
  int32_t s = finished_ ? kDead : current_;
  for (char b : bytes) {
    if (s == kDead) return false;
    s = Step(s, static_cast<uint8_t>(b));
  }
  return s != kDead && (!require_complete || sets_[size_t(s)].complete);
}

int64_t GrammarMatcher::RemainingBytesAfter(int32_t token) {
  BeginCall();
  if (finished_ || current_ == kDead) return -1;
  const int32_t next = StepToken(current_, token);
  return next == kDead ? -1 : Remaining(next);
}

void GrammarMatcher::ComputeDistances() {
  const std::vector<GrammarState>& states = grammar_->states;
  distance_ = grammar_->bytes_to_rule_end.size() == states.size() ? grammar_->bytes_to_rule_end : BytesToRuleEnd(*grammar_);
  // A counted loop still owes (at_least - counter) iterations of its cheapest body.
  rule_minimum_.assign(grammar_->rules.size(), 0);
  rule_iteration_.assign(grammar_->rules.size(), 1);
  for (const GrammarState& st : states) {
    for (const EpsilonEdge& e : st.epsilons) {
      rule_minimum_[size_t(st.rule)] = std::max(rule_minimum_[size_t(st.rule)], e.at_least);
    }
    for (const CallEdge& e : st.calls) {
      const int64_t body = 1 + distance_[size_t(grammar_->rules[size_t(e.rule)].start)];
      int64_t& iteration = rule_iteration_[size_t(st.rule)];
      iteration = iteration == 1 ? body : std::min(iteration, body);
    }
  }
}

int64_t GrammarMatcher::Remaining(int32_t set) {
  const std::vector<GrammarState>& states = grammar_->states;
  if (distance_.empty()) ComputeDistances();
  if (finished_ || set == kDead) return 0;
  if (sets_[size_t(set)].remaining >= 0) return sets_[size_t(set)].remaining;
  if (sets_[size_t(set)].complete) return sets_[size_t(set)].remaining = 0;
  auto owed = [&](int32_t state, int64_t count) {
    const size_t rule = size_t(states[size_t(state)].rule);
    const int64_t missing = std::max<int64_t>(0, std::min<int64_t>(rule_minimum_[rule], kFar) - count);
    return distance_[size_t(state)] + std::min(missing, kFar) * rule_iteration_[rule];
  };
  int64_t best = kFar;
  for (const Config& c : sets_[size_t(set)].configs) {
    int64_t d = owed(c.state, c.count);
    for (int32_t stack = c.stack; stack >= 0; stack = frames_[size_t(stack)].parent) {
      d += owed(frames_[size_t(stack)].return_state, frames_[size_t(stack)].count);
    }
    best = std::min(best, d);
  }
  return sets_[size_t(set)].remaining = best;
}

void GrammarMatcher::WalkWithin(ByteBudget* budget, std::vector<uint64_t>* words) {
  words->assign(size_t(trie_->vocab_size() + 63) / 64, 0);
  Walk(0, current_, words->data(), nullptr, budget);
  const std::vector<Config> configs = sets_[size_t(current_)].configs;
  for (const Config& c : configs) {
    for (const SpecialEdge& e : grammar_->states[size_t(c.state)].specials) {
      const int32_t next = StepSpecial(current_, e.token);
      if (next != kDead && Admits(next, budget)) SetBit(words, e.token);
    }
  }
  if (sets_[size_t(current_)].complete) {
    for (int32_t id : end_tokens_) SetBit(words, id);
  }
}

void GrammarMatcher::KeepCompletableWithin(int64_t tokens_left, std::vector<uint64_t>* words) {
  BeginCall();
  if (finished_ || current_ == kDead || !status_.ok()) return;
  // After this token: tokens_left - 1, one of them kept for the end token.
  const int64_t limit = tokens_left - 1 - (end_tokens_.empty() ? 0 : 1);
  if (limit >= Remaining(current_) + kClosingWindow) return;
  const int64_t most_after = sets_[size_t(current_)].most_after;
  if (most_after >= 0 && most_after <= limit) return;
  ByteBudget budget{limit, std::numeric_limits<int64_t>::max()};
  std::vector<uint64_t> within;
  WalkWithin(&budget, &within);
  sets_[size_t(current_)].most_after = budget.most_after;
  if (budget.most_after <= limit) return;
  if (budget.fewest_after > limit) {
    // Nothing fits (the estimate is a lower bound, or max_tokens was too small from the
    // start): steer to the nearest end.
    budget.limit = budget.fewest_after;
    WalkWithin(&budget, &within);
  }
  if (!status_.ok()) return words->assign(words->size(), 0);
  for (size_t w = 0; w < words->size() && w < within.size(); ++w) (*words)[w] &= within[w];
}

}  // namespace kimi::structured
