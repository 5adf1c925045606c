#include "kimi/tokenizer.h"

#include <gtest/gtest.h>

#include "text/tokenizer_ranks.h"

namespace kimi {
namespace {

// 256 byte tokens and a few merges; specials then start at 262.
std::string SmallRanks() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
  for (const char* m : {"he", "ll", "hell", "hello", " w", "or"}) tokens.push_back(m);
  return text::RankTable::FromTokens(tokens)->ToTiktoken();
}

Tokenizer Small() { return std::move(Tokenizer::FromContents(SmallRanks(), "")).value(); }

TEST(TokenizerTest, EncodesWithMergesAndDecodesBack) {
  const Tokenizer t = Small();
  EXPECT_EQ(t.num_base_tokens(), 262);
  EXPECT_EQ(t.vocab_size(), 262 + 256);
  auto ids = t.Encode("hello world", false);
  ASSERT_TRUE(ids.ok());
  // " world": " w" (260) merges before "or" (261); " wor" is not a token.
  EXPECT_EQ(*ids, (std::vector<int32_t>{259, 260, 261, 'l', 'd'}));
  EXPECT_EQ(*t.Decode(*ids), "hello world");
}

TEST(TokenizerTest, K3SpecialTokensFollowTheRanks) {
  const Tokenizer t = Small();
  EXPECT_EQ(t.SpecialTokenId(k3::kBos), 262);
  EXPECT_EQ(t.SpecialTokenId(k3::kEos), 263);
  EXPECT_EQ(t.SpecialTokenId(k3::kEndOfMessage), 264);
  EXPECT_EQ(t.SpecialTokenId(k3::kOpen), 265);
  EXPECT_EQ(t.SpecialTokenId(k3::kClose), 266);
  EXPECT_EQ(t.SpecialTokenId(k3::kSep), 267);
  EXPECT_EQ(t.SpecialTokenId(k3::kUnk), 262 + 254);
  EXPECT_EQ(t.SpecialTokenId(k3::kPad), 262 + 255);
  EXPECT_EQ(t.SpecialTokenId("<|reserved_token_268|>"), 268);
  EXPECT_FALSE(t.SpecialTokenId("<|im_end|>").has_value());
  EXPECT_EQ(t.special_tokens().size(), 256u);
  EXPECT_TRUE(t.IsSpecial(262));
  EXPECT_FALSE(t.IsSpecial(261));
  EXPECT_FALSE(t.IsSpecial(262 + 256));
}

TEST(TokenizerTest, SpecialTokensOnlyWhenAllowed) {
  const Tokenizer t = Small();
  const std::string text = "<|open|>hello<|sep|>[EOS]";
  auto allowed = t.Encode(text, true);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(*allowed, (std::vector<int32_t>{265, 259, 267, 263}));
  auto plain = t.Encode(text, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_GT(plain->size(), 10u);
  for (int32_t id : *plain) EXPECT_FALSE(t.IsSpecial(id));
  EXPECT_EQ(*t.Decode(*allowed), text);
  EXPECT_EQ(*t.Decode(*plain), text);
  // A partial special-token text is ordinary text.
  auto partial = t.Encode("<|open|", true);
  for (int32_t id : *partial) EXPECT_FALSE(t.IsSpecial(id));
}

TEST(TokenizerTest, SegmentsAllowSpecialTokensOnlyWhereAsked) {
  const Tokenizer t = Small();
  // Markup allowed, user content not: the user's "<|sep|>" stays text.
  const TextSegment segments[] = {{"<|open|>he", true}, {"llo<|sep|>", false}, {" world<|close|>", true}};
  auto ids = t.EncodeSegments(segments);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), 265);
  EXPECT_EQ((*ids)[1], 259);  // "he" + "llo" merge across the segment boundary into "hello"
  EXPECT_EQ(ids->back(), 266);
  int specials = 0;
  for (int32_t id : *ids) specials += t.IsSpecial(id);
  EXPECT_EQ(specials, 2);
  EXPECT_EQ(*t.Decode(*ids), "<|open|>hello<|sep|> world<|close|>");

  // Without special texts in the disallowed parts, the same ids as the joined text.
  const TextSegment plain[] = {{"<|open|>message role=\"user\"<|sep|>", true}, {"hello world", false},
                               {"<|close|>message<|sep|><|end_of_msg|>", true}};
  EXPECT_EQ(*t.EncodeSegments(plain),
            *t.Encode("<|open|>message role=\"user\"<|sep|>hello world<|close|>message<|sep|><|end_of_msg|>", true));

  // A special-token text that straddles an allowed and a disallowed segment is not special.
  const TextSegment straddle[] = {{"<|op", true}, {"en|>", false}};
  auto straddled = t.EncodeSegments(straddle);
  ASSERT_TRUE(straddled.ok());
  for (int32_t id : *straddled) EXPECT_FALSE(t.IsSpecial(id));
  const TextSegment bad[] = {{"ok", true}, {"\xC3", false}};
  EXPECT_EQ(t.EncodeSegments(bad).status().code(), Status::Code::kInvalidArgument);
}

TEST(TokenizerTest, InvalidUtf8IsAnErrorAndLeavesOutputAlone) {
  const Tokenizer t = Small();
  std::vector<int32_t> ids = {1, 2};
  const Status s = t.EncodeAppend("ok \xC3(", false, &ids);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2}));
  EXPECT_FALSE(t.Encode(std::string_view("\xED\xA0\x80", 3), true).ok());
}

TEST(TokenizerTest, DecodeRejectsIdsOutsideTheVocabulary) {
  const Tokenizer t = Small();
  const int32_t bad[] = {104, 262 + 256};
  EXPECT_EQ(t.Decode(bad).status().code(), Status::Code::kInvalidArgument);
  const int32_t negative[] = {-1};
  EXPECT_FALSE(t.Decode(negative).ok());
}

TEST(TokenizerTest, ReadsTheTableFromAddedTokensDecoder) {
  const std::string config = R"({"added_tokens_decoder": {
      "262": {"content": "[BOS]", "special": true},
      "264": {"content": "<|im_end|>", "special": true},
      "517": {"content": "[PAD]", "special": true}}})";
  auto t = Tokenizer::FromContents(SmallRanks(), config);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->SpecialTokenId("<|im_end|>"), 264);
  EXPECT_EQ(t->SpecialTokenId("<|reserved_token_263|>"), 263);  // unnamed ids are reserved
  EXPECT_FALSE(t->SpecialTokenId("<|open|>").has_value());
  EXPECT_EQ(*t->Encode("a<|im_end|>", true), (std::vector<int32_t>{'a', 264}));
}

TEST(TokenizerTest, RejectsBadTokenizerConfigs) {
  for (const char* config : {
           "not json",
           R"({"added_tokens_decoder": {"100": {"content": "x"}}})",          // inside the ranks
           R"({"added_tokens_decoder": {"518": {"content": "x"}}})",          // past the 256
           R"({"added_tokens_decoder": {"262": {"special": true}}})",         // no content
           R"({"added_tokens_decoder": {"26x": {"content": "x"}}})",
           R"({"added_tokens_decoder": {"262": {"content": "a"}, "263": {"content": "a"}}})",
       }) {
    EXPECT_EQ(Tokenizer::FromContents(SmallRanks(), config).status().code(), Status::Code::kInvalidArgument)
        << config;
  }
}

TEST(TokenizerTest, LoadingMissingFilesIsNotFound) {
  EXPECT_EQ(Tokenizer::LoadDirectory("/nonexistent/tokenizer").status().code(), Status::Code::kNotFound);
}

TEST(StreamDecoderTest, HoldsBackPartialCharacters) {
  const Tokenizer t = Small();
  StreamDecoder decoder(t);
  std::string out;
  // 中 is E4 B8 AD: three byte tokens.
  ASSERT_TRUE(decoder.Push(0xE4, &out).ok());
  EXPECT_EQ(out, "");
  ASSERT_TRUE(decoder.Push(0xB8, &out).ok());
  EXPECT_EQ(out, "");
  EXPECT_EQ(decoder.pending_bytes(), 2u);
  ASSERT_TRUE(decoder.Push(0xAD, &out).ok());
  EXPECT_EQ(out, "中");
  ASSERT_TRUE(decoder.Push(259, &out).ok());
  EXPECT_EQ(out, "中hello");
}

TEST(StreamDecoderTest, ReplacesBytesThatCanNeverBeText) {
  const Tokenizer t = Small();
  StreamDecoder decoder(t);
  std::string out;
  ASSERT_TRUE(decoder.Push(0xE4, &out).ok());
  ASSERT_TRUE(decoder.Push('x', &out).ok());  // the lead byte can no longer complete
  EXPECT_EQ(out, "\uFFFDx");
  ASSERT_TRUE(decoder.Push(0xF0, &out).ok());
  ASSERT_TRUE(decoder.Push(*t.SpecialTokenId(k3::kEndOfMessage), &out).ok());
  EXPECT_EQ(out, "\uFFFDx\uFFFD<|end_of_msg|>");
  ASSERT_TRUE(decoder.Push(0xC3, &out).ok());
  decoder.Flush(&out);
  EXPECT_EQ(out, "\uFFFDx\uFFFD<|end_of_msg|>\uFFFD");
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_FALSE(decoder.Push(100000, &out).ok());
}

}  // namespace
}  // namespace kimi
