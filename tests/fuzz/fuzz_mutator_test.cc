// The standalone driver's mutator: dictionaries read as libFuzzer writes them, and mutants
// that are the same for the same seed and stay within the size limit.
#include "fuzz_mutator.h"

#include <gtest/gtest.h>

namespace kimi::fuzz {
namespace {

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }

TEST(ParseDictionary, ReadsTokensWithEscapesAndSkipsComments) {
  auto tokens = ParseDictionary("# comment\n\n\"{\"\nkw=\"\\\"$ref\\\"\"\n  \"\\\\\"\n\"\\x00\\xff\"\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  ASSERT_EQ(tokens->size(), 4u);
  EXPECT_EQ((*tokens)[0], B("{"));
  EXPECT_EQ((*tokens)[1], B("\"$ref\""));
  EXPECT_EQ((*tokens)[2], B("\\"));
  EXPECT_EQ((*tokens)[3], (Bytes{0x00, 0xff}));
}

TEST(ParseDictionary, NamesTheBadLine) {
  auto tokens = ParseDictionary("\"ok\"\nno quotes here\n");
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.status().message().find("line 2"), std::string::npos) << tokens.status().ToString();
  EXPECT_FALSE(ParseDictionary("\"\\q\"\n").ok());
  EXPECT_FALSE(ParseDictionary("\"\\x4\"\n").ok());
}

TEST(Mutator, SameSeedSameMutantsWithinTheSizeLimit) {
  const std::vector<Bytes> corpus = {B(R"({"messages":[{"role":"user","content":"hi"}]})"), B("[1,2,3]")};
  const std::vector<Bytes> dictionary = {B("\"$ref\""), B("{")};
  Mutator a(42, &corpus, dictionary, 80), b(42, &corpus, dictionary, 80), c(43, &corpus, dictionary, 80);
  bool differs_from_other_seed = false, changed = false;
  for (int i = 0; i < 2000; ++i) {
    const Bytes x = a.Next(), y = b.Next(), z = c.Next();
    ASSERT_EQ(x, y) << "mutant " << i;
    ASSERT_LE(x.size(), 80u);
    differs_from_other_seed = differs_from_other_seed || x != z;
    changed = changed || (x != corpus[0] && x != corpus[1]);
  }
  EXPECT_TRUE(differs_from_other_seed);
  EXPECT_TRUE(changed);
}

}  // namespace
}  // namespace kimi::fuzz
