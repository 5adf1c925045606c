#include "runtime/prefix_cache.h"

#include <algorithm>

namespace kimi::runtime {

namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

PrefixCache::~PrefixCache() {
  for (auto& [key, entry] : entries_) pool_.Release(entry.page);
}

uint64_t PrefixCache::ChainKey(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = Mix(parent + 0x9e3779b97f4a7c15ull);
  for (int32_t t : tokens) h = Mix(h ^ uint64_t(uint32_t(t)));
  return h;
}

PrefixCache::Entry* PrefixCache::Find(uint64_t key, uint64_t parent, bool has_parent,
                                      std::span<const int32_t> tokens) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  Entry& e = it->second;
  if (e.has_parent != has_parent || e.parent != parent || !std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) {
    return nullptr;  // a hash collision: treated as a miss
  }
  return &e;
}

uint64_t PrefixCache::SnapshotBytes(const KdaSnapshot& kda) {
  uint64_t bytes = 0;
  for (const auto& k : kda) bytes += (k.recurrent.size() + k.conv.size()) * sizeof(float);
  return bytes;
}

PrefixHit PrefixCache::Lookup(uint64_t scope, std::span<const int32_t> prompt) {
  const int64_t page_tokens = pool_.page_tokens();
  const int64_t usable = (int64_t(prompt.size()) - 1) / page_tokens;  // keep one token to run
  ++clock_;
  std::vector<Entry*> chain;
  size_t best = 0;
  uint64_t key = scope;  // a first page's parent: chains of other scopes never match
  for (int64_t k = 0; k < usable; ++k) {
    const auto tokens = prompt.subspan(size_t(k * page_tokens), size_t(page_tokens));
    const uint64_t next = ChainKey(key, tokens);
    Entry* e = Find(next, key, k > 0, tokens);
    if (e == nullptr) break;
    chain.push_back(e);
    if (e->kda) best = chain.size();
    key = next;
  }
  PrefixHit hit;
  if (best == 0) return hit;
  for (size_t i = 0; i < best; ++i) {
    chain[i]->last_used = clock_;
    pool_.Retain(chain[i]->page);
    hit.pages.push_back(chain[i]->page);
  }
  hit.tokens = int64_t(best) * page_tokens;
  hit.kda = chain[best - 1]->kda;
  return hit;
}

void PrefixCache::Record(const PrefixHit& hit, int64_t prompt_tokens) {
  ++stats_.queries;
  stats_.query_tokens += prompt_tokens;
  if (hit.tokens == 0) return;
  ++stats_.hits;
  stats_.hit_tokens += hit.tokens;
}

int64_t PrefixCache::Insert(uint64_t scope, std::span<const int32_t> prompt, int64_t n, const SequenceState& state,
                            bool snapshot) {
  const int64_t page_tokens = pool_.page_tokens();
  if (n <= 0 || n % page_tokens != 0 || state.mla.empty()) return 0;
  const auto& table = state.mla[0].block_table;
  ++clock_;
  int64_t added = 0;
  uint64_t key = scope;
  Entry* last = nullptr;
  for (int64_t k = 0; k < n / page_tokens; ++k) {
    const auto tokens = prompt.subspan(size_t(k * page_tokens), size_t(page_tokens));
    const uint64_t next = ChainKey(key, tokens);
    Entry* e = Find(next, key, k > 0, tokens);
    if (e == nullptr) {
      if (entries_.count(next) != 0) return added;  // a collision occupies the key: stop caching here
      Entry fresh;
      fresh.parent = key;
      fresh.has_parent = k > 0;
      fresh.tokens.assign(tokens.begin(), tokens.end());
      fresh.page = table[size_t(k)];
      pool_.Retain(fresh.page);
      if (last != nullptr) ++last->children;
      e = &entries_.emplace(next, std::move(fresh)).first->second;
      ++added;
      ++stats_.entries;
      ++stats_.pages;
      stats_.bytes += pool_.page_bytes();
    }
    e->last_used = clock_;
    last = e;
    key = next;
  }
  if (snapshot && last != nullptr && !last->kda) {
    last->kda = std::make_shared<const KdaSnapshot>(state.kda);
    ++stats_.snapshots;
    stats_.bytes += SnapshotBytes(state.kda);
  }
  return added;
}

void PrefixCache::Erase(std::unordered_map<uint64_t, Entry>::iterator it) {
  Entry& e = it->second;
  if (e.has_parent) {
    auto parent = entries_.find(e.parent);
    if (parent != entries_.end()) --parent->second.children;
  }
  pool_.Release(e.page);
  stats_.bytes -= pool_.page_bytes();
  --stats_.pages;
  if (e.kda) {
    stats_.bytes -= SnapshotBytes(*e.kda);
    --stats_.snapshots;
  }
  --stats_.entries;
  ++stats_.evictions;
  entries_.erase(it);
}

bool PrefixCache::EvictTo(uint64_t target) {
  while (stats_.bytes > target) {
    // The oldest tail entry whose page only the cache holds.
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const Entry& e = it->second;
      if (e.children > 0 || pool_.RefCount(e.page) > 1) continue;
      if (victim == entries_.end() || e.last_used < victim->second.last_used) victim = it;
    }
    if (victim == entries_.end()) return false;
    Erase(victim);
  }
  return true;
}

}  // namespace kimi::runtime
