#include "structured/regex.h"

#include <gtest/gtest.h>

#include "structured/schema_compiler.h"
#include "structured/structured_test_util.h"

namespace kimi::structured {
namespace {

using testing::Accepts;
using testing::CompileSchema;

// Whether the string (JSON-encoded by the caller) matches the pattern, through a schema.
bool Matches(const std::string& pattern, const std::string& json_string) {
  Json schema = {{"type", "string"}, {"pattern", pattern}};
  auto g = CompileSchema(schema.dump());
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() && Accepts(*g, json_string);
}

TEST(Regex, AnchoredClassesAndQuantifiers) {
  EXPECT_TRUE(Matches("^[a-z]+$", R"("abc")"));
  EXPECT_FALSE(Matches("^[a-z]+$", R"("")"));
  EXPECT_FALSE(Matches("^[a-z]+$", R"("abC")"));
  EXPECT_TRUE(Matches("^\\d{3}-\\d{2,4}$", R"("123-45")"));
  EXPECT_TRUE(Matches("^\\d{3}-\\d{2,4}$", R"("123-4567")"));
  EXPECT_FALSE(Matches("^\\d{3}-\\d{2,4}$", R"("123-45678")"));
  EXPECT_TRUE(Matches("^(ab|cd)*e?$", R"("abcdab")"));
  EXPECT_TRUE(Matches("^(?:ab|cd)*e?$", R"("e")"));
  EXPECT_FALSE(Matches("^(ab|cd)*e?$", R"("abc")"));
  EXPECT_TRUE(Matches("^[^0-9]+$", R"("héllo")"));
  EXPECT_FALSE(Matches("^[^0-9]+$", R"("h3")"));
  EXPECT_TRUE(Matches("^a.c$", R"("a€c")"));
  EXPECT_FALSE(Matches("^a.c$", R"("a\nc")"));
}

TEST(Regex, UnanchoredIsASearch) {
  EXPECT_TRUE(Matches("b+", R"("abbbc")"));
  EXPECT_FALSE(Matches("b+", R"("ac")"));
  EXPECT_TRUE(Matches("^ab", R"("abzzz")"));
  EXPECT_FALSE(Matches("^ab", R"("zab")"));
}

TEST(Regex, EscapedCharactersAreWrittenAsJsonEscapes) {
  EXPECT_TRUE(Matches("^a\"b$", R"("a\"b")"));
  EXPECT_TRUE(Matches("^a\\\\b$", R"("a\\b")"));
  EXPECT_TRUE(Matches("^\\t$", R"("\t")"));
  EXPECT_TRUE(Matches("^\\x01$", R"("\u0001")"));
  EXPECT_TRUE(Matches("^\\u00e9$", R"("é")"));
}

TEST(Regex, RefusesWhatItCannotHonour) {
  for (const char* pattern : {"(a)\\1", "(?=a)", "(?<n>a)", "\\bword", "a^b", "a$b", "\\p{L}", "[a", "(a"}) {
    auto nfa = CompileRegex(pattern);
    ASSERT_FALSE(nfa.ok()) << pattern;
    EXPECT_EQ(nfa.status().code(), Status::Code::kInvalidArgument) << pattern;
  }
}

// A caller's pattern cannot recurse the parser off its stack, build a huge automaton or be
// read as something else: each bound is refused by name.
TEST(Regex, BoundsArePatternLengthNestingRepetitionAndStates) {
  const std::string deep = std::string(2000, '(') + "a" + std::string(2000, ')');
  auto nested = CompileRegex(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("nested deeper"), std::string::npos) << nested.status().message();
  EXPECT_FALSE(CompileRegex(std::string(kMaxRegexPatternBytes + 1, 'a')).ok());
  EXPECT_TRUE(CompileRegex(std::string(100, 'a')).ok());
  // Counts above the bound are refused, not clamped into a different language.
  auto many = CompileRegex("^a{100001}$");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("repetition count"), std::string::npos) << many.status().message();
  EXPECT_TRUE(Matches("^a{3,5}$", R"("aaaa")"));
  std::string stacked = "a";
  for (int i = 0; i < 100; ++i) stacked += "{1}";
  EXPECT_FALSE(CompileRegex(stacked).ok());
  // Within every count bound, the product is still bounded by automaton states.
  auto states = CompileRegex("^((a{1000}){1000}){1000}$");
  ASSERT_FALSE(states.ok());
  EXPECT_NE(states.status().message().find("automaton states"), std::string::npos) << states.status().message();
}

}  // namespace
}  // namespace kimi::structured
