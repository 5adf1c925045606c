#include "audit/compact_tree.h"

#include <bit>
#include <cstring>

#include "audit/merkle.h"

namespace kimi::audit {

Result<CompactTree> CompactTree::FromEdge(uint64_t size, std::vector<Hash> edge) {
  if (static_cast<uint64_t>(std::popcount(size)) != edge.size()) {
    return Status::Corruption("compact tree of size " + std::to_string(size) + " needs " +
                              std::to_string(std::popcount(size)) + " hashes, got " +
                              std::to_string(edge.size()));
  }
  CompactTree t;
  t.size_ = size;
  t.edge_ = std::move(edge);
  return t;
}

void CompactTree::AppendLeafHash(const Hash& leaf_hash) {
  Hash carry = leaf_hash;
  // Each trailing one bit of the size is a perfect subtree of the same height as `carry`;
  // merging them is binary addition with node hashing as the carry.
  for (uint64_t s = size_; (s & 1) != 0; s >>= 1) {
    carry = HashChildren(edge_.back(), carry);
    edge_.pop_back();
  }
  edge_.push_back(carry);
  ++size_;
}

Hash CompactTree::Root() const {
  if (edge_.empty()) return EmptyTreeRoot();
  Hash r = edge_.back();
  for (size_t i = edge_.size() - 1; i-- > 0;) r = HashChildren(edge_[i], r);
  return r;
}

std::string CompactTree::SerializeEdge() const {
  std::string out;
  out.reserve(edge_.size() * kHashSize);
  for (const Hash& h : edge_) out.append(AsBytes(h));
  return out;
}

Result<CompactTree> CompactTree::Deserialize(uint64_t size, std::string_view edge_bytes) {
  if (edge_bytes.size() % kHashSize != 0) return Status::Corruption("compact tree bytes are not whole hashes");
  std::vector<Hash> edge(edge_bytes.size() / kHashSize);
  for (size_t i = 0; i < edge.size(); ++i) std::memcpy(edge[i].data(), edge_bytes.data() + i * kHashSize, kHashSize);
  return FromEdge(size, std::move(edge));
}

}  // namespace kimi::audit
