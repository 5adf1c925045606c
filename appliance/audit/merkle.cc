#include "audit/merkle.h"

#include <bit>

namespace kimi::audit {
namespace {

// Largest power of two strictly smaller than n; precondition n > 1.
uint64_t SplitPoint(uint64_t n) { return std::bit_floor(n - 1); }

void AppendPath(std::span<const Hash> d, uint64_t m, std::vector<Hash>* out) {
  const uint64_t n = d.size();
  if (n <= 1) return;
  const uint64_t k = SplitPoint(n);
  if (m < k) {
    AppendPath(d.subspan(0, k), m, out);
    out->push_back(TreeRoot(d.subspan(k)));
  } else {
    AppendPath(d.subspan(k), m - k, out);
    out->push_back(TreeRoot(d.subspan(0, k)));
  }
}

// SUBPROOF(m, D[n], b) of RFC 9162 2.1.4.1.
void AppendSubproof(std::span<const Hash> d, uint64_t m, bool whole_old_tree, std::vector<Hash>* out) {
  const uint64_t n = d.size();
  if (m == n) {
    if (!whole_old_tree) out->push_back(TreeRoot(d));
    return;
  }
  const uint64_t k = SplitPoint(n);
  if (m <= k) {
    AppendSubproof(d.subspan(0, k), m, whole_old_tree, out);
    out->push_back(TreeRoot(d.subspan(k)));
  } else {
    AppendSubproof(d.subspan(k), m - k, false, out);
    out->push_back(TreeRoot(d.subspan(0, k)));
  }
}

bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

Hash HashLeaf(std::string_view leaf_data) {
  static constexpr char kLeafPrefix = 0x00;
  const std::string_view parts[] = {std::string_view(&kLeafPrefix, 1), leaf_data};
  return Sha256(parts);
}

Hash HashChildren(const Hash& left, const Hash& right) {
  static constexpr char kNodePrefix = 0x01;
  const std::string_view parts[] = {std::string_view(&kNodePrefix, 1), AsBytes(left), AsBytes(right)};
  return Sha256(parts);
}

Hash EmptyTreeRoot() { return Sha256(std::string_view()); }

Hash TreeRoot(std::span<const Hash> d) {
  if (d.empty()) return EmptyTreeRoot();
  if (d.size() == 1) return d[0];
  const uint64_t k = SplitPoint(d.size());
  return HashChildren(TreeRoot(d.subspan(0, k)), TreeRoot(d.subspan(k)));
}

Result<std::vector<Hash>> InclusionPath(std::span<const Hash> leaf_hashes, uint64_t index) {
  if (index >= leaf_hashes.size()) {
    return Status::InvalidArgument("leaf index " + std::to_string(index) + " is not below tree size " +
                                   std::to_string(leaf_hashes.size()));
  }
  std::vector<Hash> path;
  AppendPath(leaf_hashes, index, &path);
  return path;
}

Result<std::vector<Hash>> ConsistencyPath(std::span<const Hash> leaf_hashes, uint64_t old_size) {
  if (old_size > leaf_hashes.size()) {
    return Status::InvalidArgument("old size " + std::to_string(old_size) + " exceeds tree size " +
                                   std::to_string(leaf_hashes.size()));
  }
  std::vector<Hash> proof;
  if (old_size == 0 || old_size == leaf_hashes.size()) return proof;
  AppendSubproof(leaf_hashes, old_size, true, &proof);
  return proof;
}

Status VerifyInclusion(uint64_t index, uint64_t tree_size, const Hash& leaf_hash,
                       std::span<const Hash> path, const Hash& root) {
  if (index >= tree_size) return Status::Corruption("leaf index is not below the tree size");
  uint64_t fn = index;
  uint64_t sn = tree_size - 1;
  Hash r = leaf_hash;
  for (const Hash& p : path) {
    if (sn == 0) return Status::Corruption("inclusion path is longer than the tree is deep");
    if ((fn & 1) != 0 || fn == sn) {
      r = HashChildren(p, r);
      if ((fn & 1) == 0) {
        while ((fn & 1) == 0 && fn != 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = HashChildren(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return Status::Corruption("inclusion path is shorter than the tree is deep");
  if (r != root) return Status::Corruption("inclusion path does not lead to the root hash");
  return Status::OK();
}

Status VerifyConsistency(uint64_t old_size, uint64_t new_size, const Hash& old_root,
                         const Hash& new_root, std::span<const Hash> proof) {
  if (old_size > new_size) return Status::Corruption("old tree size exceeds the new tree size");
  if (old_size == new_size) {
    if (!proof.empty()) return Status::Corruption("proof between equal sizes must be empty");
    if (old_root != new_root) return Status::Corruption("equal tree sizes with different roots");
    return Status::OK();
  }
  if (old_size == 0) {
    if (!proof.empty()) return Status::Corruption("proof from the empty tree must be empty");
    return Status::OK();
  }
  if (proof.empty()) return Status::Corruption("consistency proof is empty");

  std::vector<Hash> path;
  path.reserve(proof.size() + 1);
  if (IsPowerOfTwo(old_size)) path.push_back(old_root);
  path.insert(path.end(), proof.begin(), proof.end());

  uint64_t fn = old_size - 1;
  uint64_t sn = new_size - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  Hash fr = path[0];
  Hash sr = path[0];
  for (size_t i = 1; i < path.size(); ++i) {
    const Hash& c = path[i];
    if (sn == 0) return Status::Corruption("consistency proof is longer than needed");
    if ((fn & 1) != 0 || fn == sn) {
      fr = HashChildren(c, fr);
      sr = HashChildren(c, sr);
      if ((fn & 1) == 0) {
        while ((fn & 1) == 0 && fn != 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = HashChildren(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return Status::Corruption("consistency proof is shorter than needed");
  if (fr != old_root) return Status::Corruption("consistency proof does not lead to the old root");
  if (sr != new_root) return Status::Corruption("consistency proof does not lead to the new root");
  return Status::OK();
}

}  // namespace kimi::audit
