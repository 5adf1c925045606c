// Runs a grammar over generated tokens and computes which tokens may come next.
//
// State: a set of configurations (grammar state, counter, call stack), closed under epsilon
// edges, calls and returns, so every configuration in it waits for a byte or a special token.
// Stacks and sets are interned to small integers, and each set remembers where each byte takes
// it, so re-reading a byte from a known set is an array lookup.
//
// Masks: for each configuration the tokens whose bytes stay inside the rule it is in (or in
// rules it calls) do not depend on the stack below; a walk of the token trie from that
// configuration alone gives them once, and MaskCache keeps the result for every request that
// shares the grammar and vocabulary, keyed by the state and the counter's distance to the
// rule's bounds (further than the longest token is the same as infinitely far). Tokens that run
// past the end of the rule are listed as trie nodes in the cached entry and finished per step
// with the real stack. A token is allowed only when some configuration survives all its bytes,
// and the grammar is trimmed, so no allowed token leads into a dead end.
//
// Owns: the per-request intern tables. Thread safety: a GrammarMatcher is used by one thread
// at a time; MaskCache is shared and thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kimi/status.h"
#include "structured/grammar.h"
#include "structured/token_trie.h"

namespace kimi::structured {

// The stack-independent part of a mask for one configuration.
struct LocalMask {
  std::vector<uint64_t> words;        // tokens allowed whatever the stack holds
  std::vector<int32_t> leaves_rule;   // trie nodes where a path returned from the rule
};

struct MaskCacheKey {
  int32_t state;
  int64_t distance[2];
  bool operator==(const MaskCacheKey&) const = default;
};
struct MaskCacheKeyHash {
  size_t operator()(const MaskCacheKey& k) const {
    return std::hash<int64_t>()((int64_t(k.state) << 24) ^ (k.distance[0] << 12) ^ k.distance[1]);
  }
};

// Bytes of masks that the caches of one vocabulary may hold together: every schema compiled over
// it charges its cached masks here, so that many schemas, each within its own bound, still
// cannot fill the memory (a schema of a few hundred long property names walked for a few
// thousand tokens caches some 20,000 masks, 400 MB on K3's vocabulary).
class MaskBudget {
 public:
  explicit MaskBudget(size_t limit) : limit_(limit) {}
  MaskBudget(const MaskBudget&) = delete;
  MaskBudget& operator=(const MaskBudget&) = delete;
  // Takes `bytes` if they fit under the limit; false (nothing taken) otherwise.
  bool TryTake(size_t bytes);
  void Give(size_t bytes);
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t limit() const { return limit_; }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
};

// Masks of one grammar over one vocabulary, keyed by state; and, when given the
// vocabulary-wide cache, masks of shareable rules (GrammarRule::shared_key) that every grammar
// over the vocabulary reuses (a free string's masks are computed once per process).
// A cache keeps a mask only while its own bytes stay within max_bytes and the budget (when
// given) has room; past either, masks are computed for the step that needs them and dropped.
// Its bytes return to the budget when the cache goes.
class MaskCache {
 public:
  static constexpr size_t kMaxSharedEntries = 2048;  // about 20 KB each on K3's vocabulary

  explicit MaskCache(std::shared_ptr<MaskCache> vocabulary_wide = nullptr, std::shared_ptr<MaskBudget> budget = nullptr,
                     size_t max_bytes = std::numeric_limits<size_t>::max())
      : vocabulary_wide_(std::move(vocabulary_wide)), budget_(std::move(budget)), max_bytes_(max_bytes) {}
  ~MaskCache();
  MaskCache(const MaskCache&) = delete;
  MaskCache& operator=(const MaskCache&) = delete;

  std::shared_ptr<const LocalMask> Find(const MaskCacheKey& key) const;
  // Keeps the mask when the bounds above allow (a mask already kept under the key stays).
  void Insert(const MaskCacheKey& key, std::shared_ptr<const LocalMask> mask);
  size_t size() const;
  size_t bytes() const;
  MaskCache* vocabulary_wide() const { return vocabulary_wide_.get(); }
  std::shared_ptr<const LocalMask> FindShared(const std::string& key) const;
  void InsertShared(const std::string& key, std::shared_ptr<const LocalMask> mask);

 private:
  bool TakeLocked(size_t bytes);  // requires mu_

  std::shared_ptr<MaskCache> vocabulary_wide_;
  std::shared_ptr<MaskBudget> budget_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  size_t bytes_ = 0;  // of the masks below, guarded by mu_
  std::unordered_map<MaskCacheKey, std::shared_ptr<const LocalMask>, MaskCacheKeyHash> entries_;  // guarded by mu_
  std::unordered_map<std::string, std::shared_ptr<const LocalMask>> shared_entries_;  // guarded by mu_
};

// Bounds on one matcher, so that a grammar whose alternatives accept the same text (a schema
// nesting anyOf branches that overlap doubles the parses open at every level) is refused
// within a second and a few tens of megabytes instead of taking minutes and gigabytes.
// The largest legitimate figures the tests reach are 1,000 parses at once, 375,000
// configurations visited in one call and 360,000 held by a whole 3,000-token walk.
struct MatcherBounds {
  size_t parses_at_once = 1 << 14;   // configurations in one closure
  size_t visits_per_call = 1 << 22;  // configurations visited by one public call
  size_t added_per_call = 1 << 21;   // configurations and frames one public call may add
  // Configurations and frames kept for reuse; past it a call starts by keeping only the
  // current set.
  size_t held = 1 << 20;
};

class GrammarMatcher {
 public:
  GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                 std::shared_ptr<MaskCache> cache, std::vector<int32_t> end_tokens, MatcherBounds bounds = MatcherBounds());
  GrammarMatcher(const GrammarMatcher&) = delete;
  GrammarMatcher& operator=(const GrammarMatcher&) = delete;

  // Consumes one token. Errors: InvalidArgument when the grammar does not allow it (the state
  // is then unchanged), or status() once it is not OK.
  Status Advance(int32_t token);
  // OK, or why the matcher stopped following the grammar (InvalidArgument: a bound above was
  // passed). Once it is not OK, masks allow nothing and Advance returns it.
  const Status& status() const { return status_; }
  // Sets *words (vocab_size bits) to the tokens allowed next.
  void AllowedTokens(std::vector<uint64_t>* words);
  // The value is complete: an end token is allowed (or was consumed).
  bool complete() const;
  bool finished() const { return finished_; }
  // Whether these bytes may come next (and, with require_complete, end the value); does not
  // change the state.
  bool AcceptsBytes(std::string_view bytes, bool require_complete = false);
  // A lower bound on the bytes still needed to complete the value (0 when complete), counting
  // a special token as one byte; counters are ignored. For steering a walk to its end.
  int64_t RemainingBytesEstimate() {
    BeginCall();
    return Remaining(current_);
  }
  // The same after `token` (an ordinary or special token), or -1 when it is not allowed.
  int64_t RemainingBytesAfter(int32_t token);
  // Narrows *words (as AllowedTokens left it) to the tokens after which the value can still be
  // completed, and an end token written, within the tokens_left - 1 that remain after this one,
  // so that a request reaching max_tokens ends on a complete value rather than being cut. Every
  // byte is assumed to be a token of its own (true of byte-level BPE vocabularies); the bytes
  // still needed are RemainingBytesEstimate's, so counted loops are approximate. When no allowed
  // token fits, keeps those that leave the fewest bytes. Checks only within kClosingWindow
  // bytes of the budget: a single token that opens more required structure than that, further
  // from the end, can still be cut.
  static constexpr int64_t kClosingWindow = 1024;
  void KeepCompletableWithin(int64_t tokens_left, std::vector<uint64_t>* words);

 private:
  struct Config {
    int32_t state;
    int32_t stack;
    int64_t count;
    bool operator==(const Config&) const = default;
    bool operator<(const Config& o) const {
      return state != o.state ? state < o.state : stack != o.stack ? stack < o.stack : count < o.count;
    }
  };
  struct Frame {
    int32_t parent;
    int32_t return_state;
    int64_t count;
  };
  struct ConfigSet {
    std::vector<Config> configs;
    bool complete = false;     // returned from the root rule
    bool left_start = false;   // returned below the configuration a local walk started from
    std::vector<int32_t> next; // byte -> set, filled lazily (kUnknown until computed)
    int64_t remaining = -1;    // Remaining(), once computed
    int64_t most_after = -1;   // the largest Remaining() after any allowed token, once walked
  };
  // Tokens are admitted by a walk only when they leave at most `limit` bytes to write.
  struct ByteBudget {
    int64_t limit;
    int64_t fewest_after;
    int64_t most_after = 0;
  };
  static constexpr int32_t kRealBottom = -1, kLocalBottom = -2;
  static constexpr int32_t kDead = -1, kUnknown = -2;

  // Starts a public call: resets the visit count and, past bounds_.held, keeps only the current set.
  void BeginCall();
  void KeepOnlyCurrentSet();
  void Stop(std::string why);
  int32_t InternFrame(int32_t parent, int32_t return_state, int64_t count);
  int32_t InternSet(std::vector<Config> configs, bool complete, bool left_start);
  int32_t Close(std::vector<Config> seeds);  // closure of seeds, interned; kDead when empty or stopped
  int32_t Step(int32_t set, uint8_t byte);
  // Whether every byte of `bytes` leads from the set back to itself.
  bool LoopsOver(int32_t set, const ByteSet& bytes);
  int32_t StepSpecial(int32_t set, int32_t token);
  int32_t StepToken(int32_t set, int32_t token);
  int64_t Remaining(int32_t set);
  void ComputeDistances();
  bool Admits(int32_t set, ByteBudget* budget);
  // Sets the bits of the tokens below trie node from_node that the set accepts (and, with a
  // budget, that leave at most budget->limit bytes to write).
  void Walk(int32_t from_node, int32_t set, uint64_t* words, std::vector<int32_t>* leaves_rule, ByteBudget* budget = nullptr);
  // The walk from the current set with its real stack, special tokens included.
  void WalkWithin(ByteBudget* budget, std::vector<uint64_t>* words);
  std::shared_ptr<const LocalMask> LocalMaskFor(const Config& c);
  MaskCacheKey KeyFor(const Config& c) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::shared_ptr<MaskCache> cache_;
  std::vector<int32_t> end_tokens_;
  std::vector<Frame> frames_;
  std::unordered_map<std::string, int32_t> frame_ids_;
  std::vector<ConfigSet> sets_;
  std::unordered_map<std::string, int32_t> set_ids_;
  std::vector<int64_t> distance_;  // per state: fewest bytes to its rule's end (lazy)
  std::vector<int64_t> rule_minimum_, rule_iteration_;  // per rule: counter minimum, loop body cost
  int32_t current_ = kDead;
  bool finished_ = false;
  MatcherBounds bounds_;
  Status status_;
  size_t visits_ = 0;       // in this public call
  size_t held_ = 0;         // configurations in sets_ and frames in frames_
  size_t held_at_call_ = 0;  // held_ when this public call began
};

}  // namespace kimi::structured
