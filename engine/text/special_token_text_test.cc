#include "kimi/special_token_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kimi {
namespace {

// The search as its contract states it, with nothing shared with the trie: at each position from
// `from`, every entry's text compared, the longest that matches kept.
SpecialTextMatch Reference(const std::vector<SpecialToken>& table, std::string_view text, size_t from,
                           size_t until) {
  for (size_t position = from; position < std::min(until, text.size()); ++position) {
    SpecialTextMatch longest{std::string_view::npos, 0, -1};
    for (const SpecialToken& token : table) {
      if (text.substr(position).starts_with(token.text) && token.text.size() > longest.length) {
        longest = {position, token.text.size(), token.id};
      }
    }
    if (longest.found()) return longest;
  }
  return {std::string_view::npos, 0, -1};
}

void ExpectSame(const SpecialTextMatch& got, const SpecialTextMatch& want, const std::string& context) {
  EXPECT_EQ(got.position, want.position) << context;
  EXPECT_EQ(got.length, want.length) << context;
  EXPECT_EQ(got.id, want.id) << context;
}

TEST(SpecialTextMatcher, TheLeftmostAndAtOnePositionTheLongestTextIsFound) {
  const SpecialTextMatcher nested({{7, "<a"}, {9, "<ab>"}, {11, "b"}});
  ExpectSame(nested.FindNext("x<ab>"), {1, 4, 9}, "the longest at one place");
  ExpectSame(nested.FindNext("x<ac"), {1, 2, 7}, "a prefix that is a text");
  ExpectSame(nested.FindNext("x<ab"), {1, 2, 7}, "the longer text runs past the end");
  ExpectSame(nested.FindNext("ab<a"), {1, 1, 11}, "the leftmost");
  ExpectSame(nested.FindNext("nothing here"), {std::string_view::npos, 0, -1}, "none");
  EXPECT_FALSE(nested.FindNext("").found());
}

// A match starts inside [from, until) but may end past `until`.
TEST(SpecialTextMatcher, TheSearchStartsOnlyInsideItsRange) {
  const SpecialTextMatcher m({{1, "<|open|>"}});
  ExpectSame(m.FindNext("<|open|><|open|>", 1), {8, 8, 1}, "after from");
  ExpectSame(m.FindNext("ab<|open|>", 0, 3), {2, 8, 1}, "ends past until");
  EXPECT_FALSE(m.FindNext("ab<|open|>", 0, 2).found());
  EXPECT_FALSE(m.FindNext("ab<|open|>", 5).found());
}

TEST(SpecialTextMatcher, FindNamesOnlyAWholeText) {
  const SpecialTextMatcher m({{3, "[BOS]"}, {4, "[BOS]x"}, {5, ReservedSpecialTokenName(163590)}});
  EXPECT_EQ(m.Find("[BOS]"), 3);
  EXPECT_EQ(m.Find("[BOS]x"), 4);
  EXPECT_EQ(m.Find("<|reserved_token_163590|>"), 5);
  for (const char* other : {"", "[BOS", "[BOS]y", "x[BOS]", "<|reserved_token_16359|>", "\xff"}) {
    EXPECT_EQ(m.Find(other), -1) << other;
  }
}

// Random texts over the table's own bytes and a few others, so that partial matches, overlaps
// and nested texts are common: the trie finds what the direct comparison finds.
TEST(SpecialTextMatcher, AgreesWithTheDirectComparisonOnRandomTexts) {
  const std::vector<SpecialToken> table = {{0, "<|im_end|>"}, {1, "<|im"}, {2, "<|"}, {3, "[EOS]"},
                                           {4, "</think>"},   {5, "<think>"}, {6, "\xe4\xb8\xad|>"},
                                           {7, ReservedSpecialTokenName(12)}, {8, ReservedSpecialTokenName(123)}};
  const SpecialTextMatcher matcher(table);
  const std::string alphabet = "<|>[]/imendthkEOS_reservdoc12 3\xe4\xb8\xad";
  std::mt19937 random(29);
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    const size_t length = random() % 40;
    for (size_t i = 0; i < length; ++i) {
      if (random() % 6 == 0) {
        text += table[random() % table.size()].text;
      } else {
        text += alphabet[random() % alphabet.size()];
      }
    }
    const size_t from = text.empty() ? 0 : random() % (text.size() + 1);
    const size_t until = random() % 2 == 0 ? std::string_view::npos : from + random() % 8;
    ExpectSame(matcher.FindNext(text, from, until), Reference(table, text, from, until), text);
  }
}

}  // namespace
}  // namespace kimi
