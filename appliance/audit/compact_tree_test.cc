#include "audit/compact_tree.h"

#include <gtest/gtest.h>

#include "audit/merkle.h"

namespace kimi::audit {
namespace {

TEST(CompactTree, RootMatchesFullTreeForEverySize) {
  std::vector<Hash> leaves;
  CompactTree tree;
  EXPECT_EQ(tree.Root(), EmptyTreeRoot());
  for (int n = 1; n <= 300; ++n) {
    leaves.push_back(HashLeaf(std::to_string(n) + " leaf"));
    tree.AppendLeafHash(leaves.back());
    ASSERT_EQ(tree.Root(), TreeRoot(leaves)) << "size " << n;
    ASSERT_EQ(tree.edge().size(), static_cast<size_t>(__builtin_popcountll(n)));
  }
}

TEST(CompactTree, SerializationRoundTrips) {
  CompactTree tree;
  for (int i = 0; i < 13; ++i) tree.AppendLeafHash(HashLeaf(std::to_string(i)));
  Result<CompactTree> back = CompactTree::Deserialize(tree.size(), tree.SerializeEdge());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, tree);
  EXPECT_EQ(back->Root(), tree.Root());
}

TEST(CompactTree, RejectsEdgeOfWrongLength) {
  CompactTree tree;
  for (int i = 0; i < 13; ++i) tree.AppendLeafHash(HashLeaf(std::to_string(i)));
  EXPECT_EQ(CompactTree::Deserialize(12, tree.SerializeEdge()).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(CompactTree::Deserialize(13, tree.SerializeEdge().substr(1)).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace kimi::audit
