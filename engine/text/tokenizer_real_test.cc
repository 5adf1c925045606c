// Tests against Kimi's real ranks (data/kimi-k3/tiktoken.model, shipped with the source).
//
// kimi_k3_golden.jsonl holds texts with their pieces and ids as computed by an independent
// implementation (Python's `regex` module running the pattern with explicit
// Script=Han / White_Space classes, and a plain-Python tiktoken merge loop); the C++ code must
// agree piece for piece and id for id.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "kimi/tokenizer.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_test_util.h"

namespace kimi::text {
namespace {

TEST(RealRanksTest, VocabularyAndK3SpecialIds) {
  const Tokenizer& t = testing::RealTokenizer();
  EXPECT_EQ(t.num_base_tokens(), 163584);
  EXPECT_EQ(t.vocab_size(), 163840);
  EXPECT_EQ(t.SpecialTokenId("[BOS]"), 163584);
  EXPECT_EQ(t.SpecialTokenId("[EOS]"), 163585);
  EXPECT_EQ(t.SpecialTokenId("<|end_of_msg|>"), 163586);
  EXPECT_EQ(t.SpecialTokenId("<|open|>"), 163587);
  EXPECT_EQ(t.SpecialTokenId("<|close|>"), 163588);
  EXPECT_EQ(t.SpecialTokenId("<|sep|>"), 163589);
  EXPECT_EQ(t.SpecialTokenId("[UNK]"), 163838);
  EXPECT_EQ(t.SpecialTokenId("[PAD]"), 163839);
  EXPECT_EQ(t.SpecialTokenId("<|reserved_token_163590|>"), 163590);
}

TEST(RealRanksTest, K26ConfigNamesItsOwnTable) {
  const std::string dir = testing::RealRanksDir();
  auto t = Tokenizer::LoadFiles(dir + "/tiktoken.model", dir + "/tokenizer_config.k2_6.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->SpecialTokenId("<|im_end|>"), 163586);
  EXPECT_EQ(t->SpecialTokenId("<|im_middle|>"), 163601);
  EXPECT_EQ(t->SpecialTokenId("<think>"), 163606);
  EXPECT_EQ(t->SpecialTokenId("<|reserved_token_163589|>"), 163589);
  EXPECT_FALSE(t->SpecialTokenId("<|open|>").has_value());
}

TEST(RealRanksTest, GoldenEncodingsFromAnIndependentImplementation) {
  const Tokenizer& t = testing::RealTokenizer();
  std::istringstream lines(testing::ReadTestFile(testing::TokenizerDataDir() + "/kimi_k3_golden.jsonl"));
  std::string line;
  int cases = 0;
  while (std::getline(lines, line)) {
    const auto c = nlohmann::json::parse(line);
    const std::string text = c["text"];
    std::vector<std::string> pieces;
    for (const auto& p : PreTokenizeWithBranches(text)) pieces.emplace_back(p.text);
    EXPECT_EQ(pieces, c["pieces"].get<std::vector<std::string>>()) << text;
    auto ids = t.Encode(text, false);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, c["ids"].get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(*t.Decode(*ids), text);
    ++cases;
  }
  EXPECT_GE(cases, 30);
}

TEST(RealRanksTest, VerifierPromptsCountAsMeasured) {
  const Tokenizer& t = testing::RealTokenizer();
  const auto data = nlohmann::json::parse(testing::ReadTestFile(testing::TokenizerDataDir() + "/k3_verifier_prompts.json"));
  for (const auto& c : data["cases"]) {
    const std::string rendered = c["rendered"];
    auto ids = t.Encode(rendered, true);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(static_cast<int>(ids->size()), c["expected_tokens"].get<int>()) << c["name"];
    EXPECT_EQ(*ids, c["ids"].get<std::vector<int32_t>>()) << c["name"];
    // The generation stub <|open|>response<|sep|> is the last three tokens.
    ASSERT_GE(ids->size(), 3u);
    EXPECT_EQ((*ids)[ids->size() - 3], 163587);
    EXPECT_EQ(*t.Decode(std::span(*ids).last(2)), "response<|sep|>");
    EXPECT_EQ(*t.Decode(*ids), rendered);

    // The same prompt with the user's text as a segment where specials are not allowed.
    const std::string user = "请用 JSON 格式回答：北京是中国的首都吗？答案需要包含键 capital。";
    const size_t at = rendered.find(user);
    ASSERT_NE(at, std::string::npos);
    const TextSegment segments[] = {{std::string_view(rendered).substr(0, at), true},
                                    {user, false},
                                    {std::string_view(rendered).substr(at + user.size()), true}};
    auto segmented = t.EncodeSegments(segments);
    ASSERT_TRUE(segmented.ok());
    EXPECT_EQ(*segmented, *ids);
  }
}

TEST(RealRanksTest, ChatMarkupTokensAreSingleIdsOnlyWhenAllowed) {
  const Tokenizer& t = testing::RealTokenizer();
  const std::string text = "<|open|>message role=\"user\"<|sep|>hi<|close|>message<|sep|><|end_of_msg|>";
  auto allowed = t.Encode(text, true);
  ASSERT_TRUE(allowed.ok());
  int specials = 0;
  for (int32_t id : *allowed) specials += t.IsSpecial(id);
  EXPECT_EQ(specials, 5);
  EXPECT_EQ(allowed->front(), 163587);
  EXPECT_EQ(allowed->back(), 163586);
  auto plain = t.Encode(text, false);
  for (int32_t id : *plain) EXPECT_FALSE(t.IsSpecial(id));
}

TEST(RealRanksTest, NumbersSplitIntoAtMostThreeDigits) {
  const Tokenizer& t = testing::RealTokenizer();
  auto ids = t.Encode("1234567890", false);
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 4u);
  EXPECT_EQ(*t.TokenBytes((*ids)[0]), "123");
  EXPECT_EQ(*t.TokenBytes((*ids)[3]), "0");
}

}  // namespace
}  // namespace kimi::text
