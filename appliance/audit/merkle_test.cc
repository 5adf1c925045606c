#include "audit/merkle.h"

#include <gtest/gtest.h>

#include "audit/compact_tree.h"

namespace kimi::audit {
namespace {

// Published RFC 6962 test data (the certificate-transparency / transparency-dev vectors):
// eight leaf inputs, the root of every prefix, and sample audit and consistency paths.
Hash H(std::string_view hex) {
  Result<Hash> h = HashFromHex(hex);
  EXPECT_TRUE(h.ok());
  return h.ok() ? *h : Hash{};
}

std::vector<Hash> VectorLeaves() {
  const char* inputs[] = {"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                          "606162636465666768696a6b6c6d6e6f"};
  std::vector<Hash> out;
  for (const char* in : inputs) out.push_back(HashLeaf(*FromHex(in)));
  return out;
}

const char* kRoots[] = {
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

struct PathVector {
  uint64_t index;
  uint64_t size;
  std::vector<const char*> path;
};

const PathVector kInclusion[] = {
    {0, 8, {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {5, 8, {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2, 3, {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
    {1, 5, {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
    {0, 1, {}},
};

struct ConsistencyVector {
  uint64_t old_size;
  uint64_t new_size;
  std::vector<const char*> proof;
};

const ConsistencyVector kConsistency[] = {
    {1, 1, {}},
    {1, 8, {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {6, 8, {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2, 5, {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
    {6, 7, {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
};

std::vector<Hash> Hashes(const std::vector<const char*>& hex) {
  std::vector<Hash> out;
  for (const char* h : hex) out.push_back(H(h));
  return out;
}

std::span<const Hash> Prefix(const std::vector<Hash>& v, uint64_t n) { return std::span<const Hash>(v).subspan(0, n); }

TEST(MerkleVectors, EmptyTreeAndRoots) {
  EXPECT_EQ(ToHex(EmptyTreeRoot()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::vector<Hash> leaves = VectorLeaves();
  EXPECT_EQ(ToHex(leaves[0]), kRoots[0]);
  for (uint64_t n = 1; n <= 8; ++n) EXPECT_EQ(ToHex(TreeRoot(Prefix(leaves, n))), kRoots[n - 1]) << "size " << n;
}

TEST(MerkleVectors, InclusionPathsMatchAndVerify) {
  const std::vector<Hash> leaves = VectorLeaves();
  for (const PathVector& v : kInclusion) {
    Result<std::vector<Hash>> path = InclusionPath(Prefix(leaves, v.size), v.index);
    ASSERT_TRUE(path.ok());
    EXPECT_EQ(*path, Hashes(v.path)) << "index " << v.index << " size " << v.size;
    EXPECT_TRUE(VerifyInclusion(v.index, v.size, leaves[v.index], *path, H(kRoots[v.size - 1])).ok());
  }
}

TEST(MerkleVectors, ConsistencyProofsMatchAndVerify) {
  const std::vector<Hash> leaves = VectorLeaves();
  for (const ConsistencyVector& v : kConsistency) {
    Result<std::vector<Hash>> proof = ConsistencyPath(Prefix(leaves, v.new_size), v.old_size);
    ASSERT_TRUE(proof.ok());
    EXPECT_EQ(*proof, Hashes(v.proof)) << v.old_size << " -> " << v.new_size;
    EXPECT_TRUE(VerifyConsistency(v.old_size, v.new_size, H(kRoots[v.old_size - 1]), H(kRoots[v.new_size - 1]),
                                  *proof)
                    .ok());
  }
}

TEST(MerkleVectors, CompactTreeEdgesMatchPublishedNodes) {
  // Right-edge subtree roots of each prefix, from the published node hashes.
  const std::vector<std::vector<const char*>> edges = {
      {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"},
      {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"},
      {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
       "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7"},
      {"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"},
      {"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
       "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"},
      {"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
       "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"},
      {"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
       "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
       "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"},
      {"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"},
  };
  const std::vector<Hash> leaves = VectorLeaves();
  CompactTree tree;
  for (size_t n = 1; n <= 8; ++n) {
    tree.AppendLeafHash(leaves[n - 1]);
    EXPECT_EQ(tree.edge(), Hashes(edges[n - 1])) << "size " << n;
    EXPECT_EQ(ToHex(tree.Root()), kRoots[n - 1]);
  }
}

// Verification must reject every single-point alteration of a valid inclusion proof.
void ExpectInclusionAlterationsFail(uint64_t index, uint64_t size, const Hash& leaf, const std::vector<Hash>& path,
                                    const Hash& root) {
  const Hash other = Sha256("something else");
  EXPECT_FALSE(VerifyInclusion(index, size, other, path, root).ok());
  EXPECT_FALSE(VerifyInclusion(index, size, leaf, path, other).ok());
  if (index > 0) {
    EXPECT_FALSE(VerifyInclusion(index - 1, size, leaf, path, root).ok());
  }
  if (index + 1 < size) {
    EXPECT_FALSE(VerifyInclusion(index + 1, size, leaf, path, root).ok());
  }
  EXPECT_FALSE(VerifyInclusion(index, size * 2 + 1, leaf, path, root).ok());
  EXPECT_FALSE(VerifyInclusion(size, size, leaf, path, root).ok());
  std::vector<Hash> longer = path;
  longer.push_back(root);
  EXPECT_FALSE(VerifyInclusion(index, size, leaf, longer, root).ok());
  std::vector<Hash> prefixed = path;
  prefixed.insert(prefixed.begin(), leaf);
  EXPECT_FALSE(VerifyInclusion(index, size, leaf, prefixed, root).ok());
  if (!path.empty()) {
    std::vector<Hash> shorter(path.begin(), path.end() - 1);
    EXPECT_FALSE(VerifyInclusion(index, size, leaf, shorter, root).ok());
  }
  for (size_t i = 0; i < path.size(); ++i) {
    std::vector<Hash> flipped = path;
    flipped[i][i % kHashSize] ^= 0x10;
    EXPECT_FALSE(VerifyInclusion(index, size, leaf, flipped, root).ok()) << "flip element " << i;
  }
}

void ExpectConsistencyAlterationsFail(uint64_t m, uint64_t n, const Hash& r1, const Hash& r2,
                                      const std::vector<Hash>& proof) {
  const Hash other = Sha256("something else");
  EXPECT_FALSE(VerifyConsistency(m, n, other, r2, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m, n, r1, other, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m, n, r2, r1, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m - 1, n, r1, r2, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m + 1, n, r1, r2, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m, n * 2, r1, r2, proof).ok());
  EXPECT_FALSE(VerifyConsistency(m, n, r1, r2, {}).ok());
  std::vector<Hash> longer = proof;
  longer.push_back(r2);
  EXPECT_FALSE(VerifyConsistency(m, n, r1, r2, longer).ok());
  std::vector<Hash> prefixed = proof;
  prefixed.insert(prefixed.begin(), proof[0]);
  EXPECT_FALSE(VerifyConsistency(m, n, r1, r2, prefixed).ok());
  std::vector<Hash> shorter(proof.begin(), proof.end() - 1);
  EXPECT_FALSE(VerifyConsistency(m, n, r1, r2, shorter).ok());
  for (size_t i = 0; i < proof.size(); ++i) {
    std::vector<Hash> flipped = proof;
    flipped[i][(7 * i) % kHashSize] ^= 0x01;
    EXPECT_FALSE(VerifyConsistency(m, n, r1, r2, flipped).ok()) << "flip element " << i;
  }
}

TEST(MerkleExhaustive, EveryInclusionProofUpTo64Leaves) {
  std::vector<Hash> leaves;
  for (int i = 0; i < 64; ++i) leaves.push_back(HashLeaf("leaf " + std::to_string(i)));
  CompactTree tree;
  for (uint64_t n = 1; n <= 64; ++n) {
    tree.AppendLeafHash(leaves[n - 1]);
    const Hash root = TreeRoot(Prefix(leaves, n));
    ASSERT_EQ(root, tree.Root()) << "size " << n;
    for (uint64_t i = 0; i < n; ++i) {
      Result<std::vector<Hash>> path = InclusionPath(Prefix(leaves, n), i);
      ASSERT_TRUE(path.ok());
      ASSERT_TRUE(VerifyInclusion(i, n, leaves[i], *path, root).ok()) << i << " in " << n;
      ExpectInclusionAlterationsFail(i, n, leaves[i], *path, root);
    }
    EXPECT_FALSE(InclusionPath(Prefix(leaves, n), n).ok());
  }
}

TEST(MerkleExhaustive, EveryConsistencyProofUpTo64Leaves) {
  std::vector<Hash> leaves;
  for (int i = 0; i < 64; ++i) leaves.push_back(HashLeaf("leaf " + std::to_string(i)));
  for (uint64_t n = 1; n <= 64; ++n) {
    const Hash r2 = TreeRoot(Prefix(leaves, n));
    for (uint64_t m = 0; m <= n; ++m) {
      const Hash r1 = TreeRoot(Prefix(leaves, m));
      Result<std::vector<Hash>> proof = ConsistencyPath(Prefix(leaves, n), m);
      ASSERT_TRUE(proof.ok());
      ASSERT_TRUE(VerifyConsistency(m, n, r1, r2, *proof).ok()) << m << " -> " << n;
      if (m > 0 && m < n) ExpectConsistencyAlterationsFail(m, n, r1, r2, *proof);
    }
    EXPECT_FALSE(ConsistencyPath(Prefix(leaves, n), n + 1).ok());
  }
}

TEST(MerkleEdgeCases, TrivialConsistency) {
  const Hash a = Sha256("a");
  const Hash b = Sha256("b");
  EXPECT_TRUE(VerifyConsistency(0, 0, a, a, {}).ok());
  EXPECT_TRUE(VerifyConsistency(0, 5, a, b, {}).ok());
  EXPECT_TRUE(VerifyConsistency(3, 3, a, a, {}).ok());
  EXPECT_FALSE(VerifyConsistency(3, 3, a, b, {}).ok());
  EXPECT_FALSE(VerifyConsistency(3, 3, a, a, std::vector<Hash>{a}).ok());
  EXPECT_FALSE(VerifyConsistency(0, 1, a, b, std::vector<Hash>{a}).ok());
  EXPECT_FALSE(VerifyConsistency(4, 3, a, b, std::vector<Hash>{a}).ok());
  EXPECT_FALSE(VerifyInclusion(0, 0, a, {}, a).ok());
  EXPECT_TRUE(VerifyInclusion(0, 1, a, {}, a).ok());
}

}  // namespace
}  // namespace kimi::audit
