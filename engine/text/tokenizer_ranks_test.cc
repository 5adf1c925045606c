#include "text/tokenizer_ranks.h"

#include <gtest/gtest.h>

namespace kimi::text {
namespace {

std::vector<std::string> ByteTokens() {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
  return t;
}

TEST(Base64Test, RoundTripsAllLengths) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    auto decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, bytes);
    bytes.push_back(static_cast<char>(i * 37));
  }
  EXPECT_EQ(Base64Encode("Hello"), "SGVsbG8=");
  EXPECT_FALSE(Base64Decode("SGVsbG8").ok());
  EXPECT_FALSE(Base64Decode("SG=sbG8=").ok());
  EXPECT_FALSE(Base64Decode("S*Vs").ok());
}

TEST(RankTableTest, FindsEveryTokenAndRoundTripsTheFormat) {
  auto tokens = ByteTokens();
  tokens.push_back("he");
  tokens.push_back("hello world, a token longer than sixteen bytes");
  auto table = RankTable::FromTokens(tokens);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  for (int32_t r = 0; r < table->size(); ++r) EXPECT_EQ(table->Find(tokens[r]), r);
  EXPECT_EQ(table->Find("hel"), RankTable::kAbsent);
  EXPECT_EQ(table->ByteRank('h'), 'h');

  auto again = RankTable::ParseTiktoken(table->ToTiktoken());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToTiktoken(), table->ToTiktoken());
}

TEST(RankTableTest, ParsesLinesInAnyOrderAndSkipsBlankOnes) {
  std::string text;
  for (int b = 255; b >= 0; --b) {
    text += Base64Encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n\n";
  }
  auto table = RankTable::ParseTiktoken(text);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->size(), 256);
  EXPECT_EQ(table->Bytes(65), "A");
}

TEST(RankTableTest, RejectsDamagedFiles) {
  std::string good = RankTable::FromTokens(ByteTokens())->ToTiktoken();
  EXPECT_EQ(RankTable::ParseTiktoken(good + "aGk= 300\n").status().code(), Status::Code::kCorruption);  // gap
  EXPECT_EQ(RankTable::ParseTiktoken(good + "aGk= 255\n").status().code(), Status::Code::kCorruption);  // repeat
  EXPECT_EQ(RankTable::ParseTiktoken(good + "aGk=\n").status().code(), Status::Code::kCorruption);
  EXPECT_EQ(RankTable::ParseTiktoken(good + "aGk= x1\n").status().code(), Status::Code::kCorruption);
  EXPECT_EQ(RankTable::ParseTiktoken(good + "QQ== 256\n").status().code(), Status::Code::kCorruption);  // "A" twice
  EXPECT_EQ(RankTable::ParseTiktoken("aGk= 0\n").status().code(), Status::Code::kCorruption);  // bytes missing
}

}  // namespace
}  // namespace kimi::text
