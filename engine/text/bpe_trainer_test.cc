#include "text/bpe_trainer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "kimi/tokenizer.h"
#include "text/tokenizer_ranks.h"
#include "text/tokenizer_test_util.h"

namespace kimi::text {
namespace {

std::vector<std::string> Corpus() {
  return {testing::ReadTestFile(testing::TokenizerDataDir() + "/multilingual.txt")};
}

TEST(BpeTrainerTest, StartsWithTheBytesAndLearnsFrequentPairs) {
  auto tokens = TrainByteLevelBpe({"low lower lowest low low"}, 300);
  ASSERT_TRUE(tokens.ok());
  ASSERT_GT(tokens->size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ((*tokens)[b], std::string(1, static_cast<char>(b)));
  // "lo" / "ow" pairs are the most frequent; the first merge is one of the "low" pairs.
  const std::string first = (*tokens)[256];
  EXPECT_TRUE(first == "lo" || first == "ow" || first == " l") << first;
  EXPECT_NE(std::find(tokens->begin(), tokens->end(), " low"), tokens->end());
  // Stops when no pair occurs twice, short of the requested size.
  EXPECT_LT(tokens->size(), 300u);
}

TEST(BpeTrainerTest, IsDeterministic) {
  auto a = TrainByteLevelBpe(Corpus(), 500);
  auto b = TrainByteLevelBpe(Corpus(), 500);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->size(), 500u);
  // Every token is distinct: the result is a valid rank table.
  EXPECT_TRUE(RankTable::FromTokens(*a).ok());
}

TEST(BpeTrainerTest, RejectsBadInput) {
  EXPECT_EQ(TrainByteLevelBpe({"x"}, 100).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(TrainByteLevelBpe({"\xFF"}, 300).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(TrainDemoTokenizer({"/nonexistent/file.txt"}, 300, "/tmp/x").code(), Status::Code::kNotFound);
}

TEST(BpeTrainerTest, WritesADirectoryTheTokenizerLoadsWithK3Layout) {
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("kimi_demo_tokenizer_" + std::to_string(::getpid()))).string();
  const std::vector<std::string> files = {testing::TokenizerDataDir() + "/multilingual.txt"};
  ASSERT_TRUE(TrainDemoTokenizer(files, 500, out).ok());
  auto t = Tokenizer::LoadDirectory(out);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->num_base_tokens(), 500);
  EXPECT_EQ(t->SpecialTokenId("[BOS]"), 500);
  EXPECT_EQ(t->SpecialTokenId("[EOS]"), 501);
  EXPECT_EQ(t->SpecialTokenId("<|end_of_msg|>"), 502);
  EXPECT_EQ(t->SpecialTokenId("<|open|>"), 503);
  EXPECT_EQ(t->SpecialTokenId("<|close|>"), 504);
  EXPECT_EQ(t->SpecialTokenId("<|sep|>"), 505);
  EXPECT_EQ(t->SpecialTokenId("[UNK]"), 754);
  EXPECT_EQ(t->SpecialTokenId("[PAD]"), 755);
  const std::string text = "<|open|>message role=\"user\"<|sep|>北京 Việt don't<|close|>message<|sep|>";
  auto ids = t->Encode(text, true);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), 503);
  EXPECT_EQ(*t->Decode(*ids), text);

  // Training again writes the same bytes.
  const std::string out2 = out + "_again";
  ASSERT_TRUE(TrainDemoTokenizer(files, 500, out2).ok());
  EXPECT_EQ(testing::ReadTestFile(out + "/tiktoken.model"), testing::ReadTestFile(out2 + "/tiktoken.model"));
  EXPECT_EQ(testing::ReadTestFile(out + "/tokenizer_config.json"),
            testing::ReadTestFile(out2 + "/tokenizer_config.json"));
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(out2);
}

TEST(BpeTrainerTest, DemoCorpusFilesListsRepositoryText) {
  const std::string source = std::filesystem::path(testing::TokenizerDataDir()).parent_path().parent_path().parent_path();
  const auto files = DemoCorpusFiles(source);
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end()));
  EXPECT_NE(std::find_if(files.begin(), files.end(),
                         [](const std::string& f) { return f.ends_with("multilingual.txt"); }),
            files.end());
  EXPECT_NE(std::find_if(files.begin(), files.end(),
                         [](const std::string& f) { return f.ends_with("tokenizer.cc"); }),
            files.end());
}

}  // namespace
}  // namespace kimi::text
