// PieceCache: the token ids of recently encoded multi-token pieces (pieces that are not one
// vocabulary entry and went through byte-pair merging), shared by every thread that encodes
// with one tokenizer.
//
// The bound is on the whole cache, not per thread: a daemon encodes on many threads (a worker
// per connection, a generation thread per stream), and per-thread caches of 32,768 entries
// (about 120 bytes each) filled towards hundreds of MB one unique piece (a request id, a
// number) per request at a time, which the soak benchmark showed as RSS growing for as long
// as it ran. Here kShards shards hold at most kEntriesPerShard entries and kBytesPerShard
// bytes each (8 MiB in all: a piece can be a run of 25,000 letters or Han characters, 200 KB
// with its ids, so a bound on entries alone let a few hundred requests of such runs hold
// gigabytes); a full shard is emptied and refills with what is encoded now, and a piece that
// would take more than a sixteenth of a shard is not kept.
//
// Thread safety: every method may be called from any thread; each shard has its own mutex, so
// threads encoding at once rarely wait for each other.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kimi::text {

class PieceCache {
 public:
  static constexpr size_t kShards = 16;
  static constexpr size_t kEntriesPerShard = 1024;
  static constexpr size_t kBytesPerShard = 512 * 1024;

  PieceCache() = default;
  PieceCache(const PieceCache&) = delete;
  PieceCache& operator=(const PieceCache&) = delete;

  // Appends the cached ids of `piece` to *ids and returns true; false (nothing appended) when
  // the piece is not cached.
  bool AppendCached(std::string_view piece, std::vector<int32_t>* ids) const;
  // Remembers the ids `piece` encodes to.
  void Insert(std::string_view piece, std::span<const int32_t> piece_ids);
  // Entries held now, over all shards, and the bytes they take.
  size_t size() const;
  size_t bytes() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> entries;  // guarded by mu
    size_t bytes = 0;  // of entries, guarded by mu
  };
  // What an entry takes: the piece, its ids and the map's node.
  static size_t EntryBytes(std::string_view piece, size_t ids) { return piece.size() + ids * sizeof(int32_t) + 96; }
  const Shard& ShardOf(std::string_view piece) const;

  std::array<Shard, kShards> shards_;
};

}  // namespace kimi::text
