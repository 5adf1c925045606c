#include "text/tokenizer_bpe.h"

#include <gtest/gtest.h>

#include <random>

#include "text/tokenizer_test_util.h"

namespace kimi::text {
namespace {

RankTable SmallTable(const std::vector<std::string>& merges) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
  tokens.insert(tokens.end(), merges.begin(), merges.end());
  return std::move(RankTable::FromTokens(tokens)).value();
}

std::vector<int32_t> Encode(const RankTable& t, std::string_view piece) {
  std::vector<int32_t> ids;
  BytePairEncode(t, piece, &ids);
  return ids;
}

TEST(BytePairEncodeTest, MergesTheLowestRankFirst) {
  // "bc" (256) outranks "ab" (257), so "abc" becomes a + bc, never ab + c.
  const RankTable t = SmallTable({"bc", "ab", "abc_unreachable"});
  EXPECT_EQ(Encode(t, "abc"), (std::vector<int32_t>{'a', 256}));
  // Merges continue on merged parts: "aa" then "aaaa".
  const RankTable u = SmallTable({"aa", "aaaa"});
  EXPECT_EQ(Encode(u, "aaaaa"), (std::vector<int32_t>{257, 'a'}));
}

TEST(BytePairEncodeTest, TiesGoToTheLeftmostPair) {
  const RankTable t = SmallTable({"aa"});
  EXPECT_EQ(Encode(t, "aaa"), (std::vector<int32_t>{256, 'a'}));
}

TEST(BytePairEncodeTest, QuadraticAndHeapAgree) {
  const std::string corpus = testing::ReadTestFile(testing::TokenizerDataDir() + "/multilingual.txt");
  const Tokenizer& demo = testing::DemoTokenizer();
  std::vector<std::string> tokens;
  for (int32_t id = 0; id < demo.num_base_tokens(); ++id) tokens.emplace_back(*demo.TokenBytes(id));
  const RankTable table = std::move(RankTable::FromTokens(tokens)).value();

  std::mt19937_64 rng(7);
  for (int round = 0; round < 400; ++round) {
    // Slices of real text (merges happen) and runs of repeated bytes (long pieces).
    std::string piece;
    if (round % 3 == 0) {
      piece.assign(1 + rng() % 300, "ae= "[rng() % 4]);
    } else {
      const size_t start = rng() % corpus.size();
      piece = corpus.substr(start, 1 + rng() % 400);
    }
    std::vector<int32_t> quadratic, heap;
    BytePairEncodeQuadratic(table, piece, &quadratic);
    BytePairEncodeHeap(table, piece, &heap);
    ASSERT_EQ(quadratic, heap) << "piece of " << piece.size() << " bytes";
    std::string joined;
    for (int32_t id : heap) joined += table.Bytes(id);
    ASSERT_EQ(joined, piece);
  }
}

}  // namespace
}  // namespace kimi::text
