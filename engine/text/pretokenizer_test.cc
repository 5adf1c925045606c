#include "text/pretokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/pretokenizer_classes.h"

namespace kimi::text {
namespace {

std::vector<std::string> Pieces(std::string_view text) {
  std::vector<std::string_view> views;
  PreTokenize(text, &views);
  return std::vector<std::string>(views.begin(), views.end());
}

using V = std::vector<std::string>;

TEST(PreTokenizerTest, LettersTakeOneLeadingSpaceOrPunctuation) {
  EXPECT_EQ(Pieces("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(Pieces(",foo"), (V{",foo"}));
  EXPECT_EQ(Pieces(" ,foo"), (V{" ,", "foo"}));
  EXPECT_EQ(Pieces("\tfoo"), (V{"\tfoo"}));
}

TEST(PreTokenizerTest, ContractionsStayWithTheirWord) {
  EXPECT_EQ(Pieces("don't"), (V{"don't"}));
  EXPECT_EQ(Pieces("I'm you're they've we'll I'd it's"),
            (V{"I'm", " you're", " they've", " we'll", " I'd", " it's"}));
  EXPECT_EQ(Pieces("DON'T"), (V{"DON'T"}));      // all capitals: the second letters branch
  EXPECT_EQ(Pieces("they'LL"), (V{"they'LL"}));  // (?i:...) ignores case
  EXPECT_EQ(Pieces("it\u2019s"), (V{"it", "\u2019s"}));  // only U+0027 is an apostrophe
  EXPECT_EQ(Pieces("it'\u017F"), (V{"it'\u017F"}));       // long s folds to s
  EXPECT_EQ(Pieces("'s"), (V{"'s"}));                     // apostrophe as the prefix
  EXPECT_EQ(Pieces("cats'"), (V{"cats", "'"}));
}

TEST(PreTokenizerTest, CaseRunsFollowTheTwoLetterBranches) {
  EXPECT_EQ(Pieces("HTTPServer"), (V{"HTTPServer"}));
  EXPECT_EQ(Pieces("ABC123"), (V{"ABC", "123"}));
  EXPECT_EQ(Pieces("camelCaseWord"), (V{"camel", "Case", "Word"}));
}

TEST(PreTokenizerTest, DigitsSplitIntoRunsOfAtMostThree) {
  EXPECT_EQ(Pieces("1234567"), (V{"123", "456", "7"}));
  EXPECT_EQ(Pieces("v2.10"), (V{"v", "2", ".", "10"}));
  EXPECT_EQ(Pieces("\u0663\u0664\u00BD\u2167"), (V{"\u0663\u0664\u00BD", "\u2167"}));  // \p{N} is all numbers
}

TEST(PreTokenizerTest, HanRunsAreSeparateFromOtherLetters) {
  EXPECT_EQ(Pieces("中文English混合"), (V{"中文", "English", "混合"}));
  EXPECT_EQ(Pieces("北京是中国的首都吗？"), (V{"北京是中国的首都吗", "？"}));
  EXPECT_EQ(Pieces(" 你好"), (V{" ", "你好"}));  // Han takes no leading space
  EXPECT_EQ(Pieces("日本語のテキスト"), (V{"日本語", "のテキスト"}));  // kana are not Han
  EXPECT_EQ(Pieces("第3章〇"), (V{"第", "3", "章〇"}));  // U+3007 is Script=Han although \p{N}
  EXPECT_EQ(Pieces("\U00020000\U0002A6D6x"), (V{"\U00020000\U0002A6D6", "x"}));
  EXPECT_EQ(Pieces("。"), (V{"。"}));  // Script=Common, not Han (Script_Extensions would say Han)
}

TEST(PreTokenizerTest, MarksJoinLetters) {
  EXPECT_EQ(Pieces("e\u0301te\u0301"), (V{"e\u0301te\u0301"}));
  EXPECT_EQ(Pieces("\u0301abc"), (V{"\u0301abc"}));
  EXPECT_EQ(Pieces("Việt Nam"), (V{"Việt", " Nam"}));
}

TEST(PreTokenizerTest, PunctuationRunsTakeFollowingLineBreaks) {
  EXPECT_EQ(Pieces("hello!!!\n\nworld"), (V{"hello", "!!!\n\n", "world"}));
  EXPECT_EQ(Pieces("a == b"), (V{"a", " ==", " b"}));
  EXPECT_EQ(Pieces(" 😀👍"), (V{" 😀👍"}));
}

TEST(PreTokenizerTest, WhitespaceBranches) {
  EXPECT_EQ(Pieces("a  b"), (V{"a", " ", " b"}));            // \s+(?!\S) leaves one space
  EXPECT_EQ(Pieces("x\n\ny"), (V{"x", "\n\n", "y"}));
  EXPECT_EQ(Pieces("  \n  x"), (V{"  \n", " ", " x"}));       // \s*[\r\n]+ stops at the last break
  EXPECT_EQ(Pieces("end   "), (V{"end", "   "}));             // trailing run to the end
  EXPECT_EQ(Pieces("\t\tfoo"), (V{"\t", "\tfoo"}));
  EXPECT_EQ(Pieces(" 1"), (V{" ", "1"}));                     // \s+ when nothing else matches
  EXPECT_EQ(Pieces("\r\n\r\nx"), (V{"\r\n\r\n", "x"}));
  EXPECT_EQ(Pieces("\u3000\u00A0x"), (V{"\u3000", "\u00A0x"}));
}

TEST(PreTokenizerTest, ReportsTheBranchThatMatched) {
  const auto tokens = PreTokenizeWithBranches("中 Ab HTTP 12 !\n \n  x  ");
  std::vector<PatternBranch> branches;
  for (const auto& t : tokens) branches.push_back(t.branch);
  EXPECT_EQ(branches, (std::vector<PatternBranch>{
                          PatternBranch::kHan, PatternBranch::kLetters, PatternBranch::kCapitalised,
                          PatternBranch::kSpace, PatternBranch::kDigits, PatternBranch::kPunctuation,
                          PatternBranch::kNewlines, PatternBranch::kTrailingSpace, PatternBranch::kLetters,
                          PatternBranch::kTrailingSpace}));
}

TEST(PreTokenizerTest, EmptyTextHasNoPieces) { EXPECT_TRUE(Pieces("").empty()); }

TEST(CharClassesTest, TableAgreesWithIcuOnEveryCodePoint) {
  const CharClasses& classes = CharClasses::Get();
  for (char32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x40000 ? 1 : 97)) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    ASSERT_EQ(classes.Of(cp), CharClasses::Compute(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
  EXPECT_TRUE(classes.Of(U'中') & kClassHan);
  EXPECT_FALSE(classes.Of(U'。') & kClassHan);
  EXPECT_TRUE(classes.Of(0x85) & kClassSpace);
  EXPECT_TRUE(classes.Of(0x1C) & kClassPySpace);
  EXPECT_FALSE(classes.Of(0x1C) & kClassSpace);
  EXPECT_TRUE(classes.Of(0x0301) & kClassUpperish);
  EXPECT_TRUE(classes.Of(0x0301) & kClassLowerish);
  EXPECT_FALSE(classes.Of(U'々') & (kClassUpperish | kClassLowerish));  // Lm but Han
}

}  // namespace
}  // namespace kimi::text
