#include "model/prefill_pieces.h"

#include <gtest/gtest.h>

namespace kimi::model {
namespace {

TEST(PrefillPieces, AllRowsLandAtTheirTokenIndex) {
  const auto pieces = PlanPrefillPieces(10, 4, LogitsRows::kAll);
  ASSERT_EQ(pieces.size(), 3u);
  int64_t next_token = 0;
  for (const PrefillPiece& p : pieces) {
    EXPECT_EQ(p.begin, next_token);
    EXPECT_EQ(p.first_logits_row, p.begin);
    ASSERT_EQ(int64_t(p.logit_rows.size()), p.count);
    for (int64_t j = 0; j < p.count; ++j) EXPECT_EQ(p.logit_rows[size_t(j)], j);
    next_token += p.count;
  }
  EXPECT_EQ(next_token, 10);
  EXPECT_EQ(pieces.back().count, 2);
}

TEST(PrefillPieces, LastRowOnlyFromTheLastPiece) {
  const auto pieces = PlanPrefillPieces(9, 4, LogitsRows::kLast);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_TRUE(pieces[0].logit_rows.empty());
  EXPECT_TRUE(pieces[1].logit_rows.empty());
  EXPECT_EQ(pieces[2].begin, 8);
  EXPECT_EQ(pieces[2].logit_rows, std::vector<int64_t>{0});
  EXPECT_EQ(pieces[2].first_logits_row, 0);
}

TEST(PrefillPieces, OnePieceWhenThePromptFits) {
  const auto pieces = PlanPrefillPieces(5, 8, LogitsRows::kLast);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].count, 5);
  EXPECT_EQ(pieces[0].logit_rows, std::vector<int64_t>{4});
}

}  // namespace
}  // namespace kimi::model
