#include "audit/stored_tree_prover.h"

#include <gtest/gtest.h>

#include <bit>

#include "audit/merkle.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

using testing::BuildLog;
using testing::TempDir;

// Paths from the stored leaves equal merkle.h's paths over the whole leaf array, for every
// leaf of trees of every size up to the log's, asked in increasing order as an export does.
TEST(StoredTreeProver, PathsEqualThoseOverAllLeaves) {
  TempDir dir;
  constexpr int kRecords = 70;
  BuildLog(dir.path(), kRecords, {});
  AuditStoreOptions o;
  o.read_only = true;
  std::unique_ptr<AuditStore> store = std::move(AuditStore::Open(dir.File("audit.db"), o)).value();
  std::vector<Hash> leaves;
  ASSERT_TRUE(store->ScanLeafHashes(0, kRecords, [&](const Hash& h) { leaves.push_back(h); }).ok());
  for (uint64_t size = 1; size <= kRecords; ++size) {
    StoredTreeProver prover(*store, size);
    const std::span<const Hash> tree(leaves.data(), size);
    for (uint64_t i = 0; i < size; ++i) {
      Result<std::vector<Hash>> got = prover.InclusionPath(i);
      Result<std::vector<Hash>> want = InclusionPath(tree, i);
      ASSERT_TRUE(got.ok() && want.ok()) << got.status().ToString();
      ASSERT_EQ(*got, *want) << "leaf " << i << " of " << size;
    }
    EXPECT_EQ(prover.InclusionPath(size).status().code(), Status::Code::kInvalidArgument);
    // Each range is read once: at most one pass over the leaves per level of the tree.
    EXPECT_LE(prover.leaves_read(), size * std::bit_width(size)) << size;
  }
  // Out of order is still correct.
  StoredTreeProver prover(*store, kRecords);
  for (uint64_t i : {69u, 3u, 40u, 3u, 0u}) {
    ASSERT_EQ(*prover.InclusionPath(i), *InclusionPath(std::span<const Hash>(leaves), i)) << i;
  }
}

}  // namespace
}  // namespace kimi::audit
