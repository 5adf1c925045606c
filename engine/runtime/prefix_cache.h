// Prefix caching for repeated prompt beginnings (system prompts, tool declarations): the MLA
// latent pages of a prompt's full pages and KDA state snapshots at some page boundaries, keyed
// by a hash chain of the token ids (page k's key hashes page k-1's key with page k's tokens;
// the tokens are kept and compared, so a hash collision cannot return a wrong prefix).
//
// A cached page is a page of the PagePool held by one reference of the cache; sequences that
// hit it take their own reference and read it in place (never write it: a hit always ends on a
// page boundary, so the sequence's next token goes to a page of its own). A KDA snapshot is
// copied into the sequence that hits it (the recurrent state changes with every token).
// Eviction is least recently used, from the tail of a chain only (an entry with no cached
// continuation), and never of a page that a running sequence still reads.
//
// Every chain belongs to a scope (GenerationRequest::prefix_cache_scope): a prompt finds only
// the prefixes cached by requests of its own scope. A shared prefix answers sooner, so a cache
// shared by every caller would tell one caller, by its time to first token, what others sent.
//
// Owns: the entries, their page references and snapshots.
// Thread safety: none; the scheduler thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kimi/model.h"
#include "runtime/page_pool.h"

namespace kimi::runtime {

using KdaSnapshot = std::vector<KdaLayerState>;

struct PrefixHit {
  int64_t tokens = 0;                          // a multiple of page_tokens; 0: no hit
  std::vector<int32_t> pages;                  // retained for the caller
  std::shared_ptr<const KdaSnapshot> kda;      // the state after `tokens` tokens
};

struct PrefixCacheStats {
  int64_t queries = 0;
  int64_t hits = 0;
  int64_t query_tokens = 0;  // prompt tokens looked up
  int64_t hit_tokens = 0;    // prompt tokens served from the cache
  int64_t entries = 0;
  int64_t pages = 0;
  int64_t snapshots = 0;
  int64_t evictions = 0;
  uint64_t bytes = 0;        // pages (at PagePool::page_bytes) and snapshots held
};

class PrefixCache {
 public:
  explicit PrefixCache(PagePool& pool) : pool_(pool) {}
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // The longest cached prefix of `prompt` that ends on a KDA snapshot and leaves at least one
  // token to run (the last prompt token must produce logits). Its pages are retained for the
  // caller, who releases them with its state.
  // Counts nothing: a request that does not fit yet may be looked up again; Record() counts the
  // lookup that admitted it.
  PrefixHit Lookup(uint64_t scope, std::span<const int32_t> prompt);
  void Record(const PrefixHit& hit, int64_t prompt_tokens);

  // `state` has consumed prompt[0, n), n a multiple of page_tokens, its MLA caches pooled.
  // Caches its pages not cached yet (returning how many, so the caller can move them out of
  // its own reservation) and, when `snapshot` and none exists at n, a copy of its KDA state.
  int64_t Insert(uint64_t scope, std::span<const int32_t> prompt, int64_t n, const SequenceState& state, bool snapshot);

  // Bytes a snapshot of these KDA layers takes (also a sequence's KDA slot: state.kda).
  static uint64_t SnapshotBytes(const KdaSnapshot& kda);

  // Evicts least recently used evictable entries until bytes() <= target. Returns whether the
  // target was reached.
  bool EvictTo(uint64_t target);

  uint64_t bytes() const { return stats_.bytes; }
  const PrefixCacheStats& stats() const { return stats_; }

 private:
  struct Entry {
    uint64_t parent = 0;  // the previous page's key; a first page's scope
    std::vector<int32_t> tokens;  // this page's tokens
    int32_t page = -1;
    std::shared_ptr<const KdaSnapshot> kda;
    uint64_t last_used = 0;
    int children = 0;
    bool has_parent = false;
  };
  static uint64_t ChainKey(uint64_t parent, std::span<const int32_t> tokens);
  // The entry for page k of prompt (k from 0) given its parent key, verified against the tokens.
  Entry* Find(uint64_t key, uint64_t parent, bool has_parent, std::span<const int32_t> tokens);
  void Erase(std::unordered_map<uint64_t, Entry>::iterator it);

  PagePool& pool_;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t clock_ = 0;
  PrefixCacheStats stats_;
};

}  // namespace kimi::runtime
