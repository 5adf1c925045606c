#include "text/piece_cache.h"

namespace kimi::text {

const PieceCache::Shard& PieceCache::ShardOf(std::string_view piece) const {
  // The high bits: the map inside the shard buckets by the low ones.
  return shards_[(Hash{}(piece) >> 20) % kShards];
}

bool PieceCache::AppendCached(std::string_view piece, std::vector<int32_t>* ids) const {
  const Shard& shard = ShardOf(piece);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto hit = shard.entries.find(piece);
  if (hit == shard.entries.end()) return false;
  ids->insert(ids->end(), hit->second.begin(), hit->second.end());
  return true;
}

void PieceCache::Insert(std::string_view piece, std::span<const int32_t> piece_ids) {
  const size_t entry = EntryBytes(piece, piece_ids.size());
  if (entry > kBytesPerShard / 16) return;
  Shard& shard = const_cast<Shard&>(ShardOf(piece));
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.entries.size() >= kEntriesPerShard || shard.bytes + entry > kBytesPerShard) {
    shard.entries.clear();
    shard.bytes = 0;
  }
  if (shard.entries.emplace(std::string(piece), std::vector<int32_t>(piece_ids.begin(), piece_ids.end())).second) {
    shard.bytes += entry;
  }
}

size_t PieceCache::size() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.entries.size();
  }
  return n;
}

size_t PieceCache::bytes() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.bytes;
  }
  return n;
}

}  // namespace kimi::text
