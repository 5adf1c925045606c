// Property tests: random Unicode text round-trips through Encode and Decode, with the demo
// ranks and (when ../shared has them) the real ones; the pre-tokeniser's pieces always cover
// the text exactly; the stream decoder, fed any split of the ids, rebuilds the same text.
#include <gtest/gtest.h>

#include <random>

#include "kimi/tokenizer.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_test_util.h"
#include "text/tokenizer_utf8.h"

namespace kimi::text {
namespace {

void CheckRoundTrips(const Tokenizer& tokenizer, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    const std::string text = testing::RandomUnicodeText(rng, 120);
    ASSERT_TRUE(ValidateUtf8(text).ok());
    for (bool allow_special : {false, true}) {
      auto ids = tokenizer.Encode(text, allow_special);
      ASSERT_TRUE(ids.ok()) << ids.status().ToString();
      for (int32_t id : *ids) ASSERT_LT(id, tokenizer.num_base_tokens());  // no special text in it
      auto decoded = tokenizer.Decode(*ids);
      ASSERT_TRUE(decoded.ok());
      ASSERT_EQ(*decoded, text) << "seed " << seed << " round " << round;
    }
  }
}

void CheckStreaming(const Tokenizer& tokenizer, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    // Special tokens inside the text exercise the flush before a special token.
    const std::string text = testing::RandomUnicodeText(rng, 60) + "<|open|>" + testing::RandomUnicodeText(rng, 60);
    auto ids = tokenizer.Encode(text, true);
    ASSERT_TRUE(ids.ok());
    StreamDecoder decoder(tokenizer);
    std::string streamed;
    for (int32_t id : *ids) {
      const size_t before = streamed.size();
      ASSERT_TRUE(decoder.Push(id, &streamed).ok());
      // Every emitted chunk is whole characters.
      ASSERT_TRUE(ValidateUtf8(std::string_view(streamed).substr(before)).ok());
    }
    decoder.Flush(&streamed);
    ASSERT_EQ(streamed, text);
  }
}

TEST(TokenizerPropertyTest, PiecesCoverTheText) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::string text = testing::RandomUnicodeText(rng, 80);
    std::vector<std::string_view> pieces;
    PreTokenize(text, &pieces);
    std::string joined;
    for (std::string_view p : pieces) {
      ASSERT_FALSE(p.empty());
      ASSERT_TRUE(ValidateUtf8(p).ok());  // pieces never split a character
      joined.append(p);
    }
    ASSERT_EQ(joined, text);
  }
}

TEST(TokenizerPropertyTest, RandomTextRoundTripsWithDemoRanks) {
  CheckRoundTrips(testing::DemoTokenizer(), 1, 1500);
}

TEST(TokenizerPropertyTest, RandomTextRoundTripsWithRealRanks) {
  if (!testing::RealRanksDir()) GTEST_SKIP() << "skipped: ../shared/kimi-k3/tiktoken.model is absent";
  CheckRoundTrips(testing::RealTokenizer(), 2, 1500);
}

TEST(TokenizerPropertyTest, StreamDecoderRebuildsTheText) {
  CheckStreaming(testing::DemoTokenizer(), 3, 300);
  if (testing::RealRanksDir()) CheckStreaming(testing::RealTokenizer(), 4, 300);
}

TEST(TokenizerPropertyTest, LongRunsAreCutLikeTokenizationKimi) {
  // Over 25,000 spaces and over 25,000 letters: both get cut, and still round-trip.
  const Tokenizer& t = testing::DemoTokenizer();
  const std::string text = std::string(30000, ' ') + std::string(26000, 'a') + "b";
  auto ids = t.Encode(text, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*t.Decode(*ids), text);
}

}  // namespace
}  // namespace kimi::text
