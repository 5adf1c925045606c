#include "policy/pattern_program.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace kimi::policy {
namespace {

using Spans = std::vector<std::pair<size_t, size_t>>;

Spans Ours(std::string_view pattern, std::string_view text) {
  auto program = CompilePattern(pattern);
  EXPECT_TRUE(program.ok()) << pattern << ": " << program.status().ToString();
  Spans spans;
  if (!program.ok()) return spans;
  std::vector<PatternMatch> matches;
  EXPECT_EQ(FindPatternMatches(*program, text, 1 << 20, &matches), std::nullopt);
  for (const PatternMatch& m : matches) spans.emplace_back(m.begin, m.end);
  return spans;
}

// ECMAScript's own matcher (libstdc++'s backtracking executor), non-empty matches in order.
Spans Reference(const std::string& pattern, const std::string& text) {
  const std::regex re(pattern, std::regex::ECMAScript);
  Spans spans;
  using Iterator = std::regex_iterator<std::string::const_iterator>;
  for (Iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    if (it->length(0) > 0) spans.emplace_back(size_t(it->position(0)), size_t(it->position(0) + it->length(0)));
  }
  return spans;
}

// Random patterns over a small alphabet, with every construct the matcher has. A quantifier
// that repeats is never put on a part that can match empty text: there libstdc++ departs from
// ECMAScript's rule (an iteration that matches nothing ends the loop) in ways of its own.
class PatternGenerator {
 public:
  explicit PatternGenerator(uint64_t seed) : rng_(seed) {}
  std::string Next() { return Alternation(0).text; }

 private:
  struct Part {
    std::string text;
    bool nullable;
  };
  int Pick(int n) { return int(rng_() % uint64_t(n)); }

  Part Alternation(int depth) {
    Part out{"", false};
    const int branches = Pick(4) == 0 ? 2 : 1;
    for (int b = 0; b < branches; ++b) {
      Part branch{"", true};
      for (int k = 1 + Pick(3); k > 0; --k) {
        Part atom = Atom(depth);
        branch.text += atom.text;
        branch.nullable = branch.nullable && atom.nullable;
      }
      out.text += (b ? "|" : "") + branch.text;
      out.nullable = out.nullable || branch.nullable;
    }
    return out;
  }

  Part Atom(int depth) {
    Part atom;
    switch (Pick(depth > 2 ? 10 : 13)) {
      case 0: case 1: case 2: atom = {std::string(1, "ab-0 "[Pick(5)]), false}; break;
      case 3: atom = {"[ab]", false}; break;
      case 4: atom = {"[^a]", false}; break;
      case 5: atom = {"[a-c0-9]", false}; break;
      case 6: atom = {".", false}; break;
      case 7: atom = {"\\d", false}; break;
      case 8: atom = {Pick(2) ? "\\w" : "\\s", false}; break;
      case 9: {
        const char* assertions[] = {"\\b", "\\B", "^", "$"};
        return {assertions[Pick(4)], true};
      }
      default: {
        Part inner = Alternation(depth + 1);
        atom = {(Pick(2) ? "(?:" : "(") + inner.text + ")", inner.nullable};
      }
    }
    if (Pick(3) != 0) return atom;
    const char* repeating[] = {"*", "+", "{2}", "{1,}", "{1,3}", "{0,2}"};
    const char* once[] = {"?", "{0,1}", "{1}"};
    const bool repeats = !atom.nullable && Pick(3) != 0;
    std::string q = repeats ? repeating[Pick(6)] : once[Pick(3)];
    if (Pick(3) == 0) q += "?";
    const bool nullable = atom.nullable || q[0] == '*' || q[0] == '?' || q.starts_with("{0");
    return {atom.text + q, nullable};
  }

  std::mt19937_64 rng_;
};

TEST(PatternProgram, FindsWhatEcmaScriptFindsOnRandomPatternsAndTexts) {
  PatternGenerator patterns(20261203);
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int p = 0; p < 3000; ++p) {
    const std::string pattern = patterns.Next();
    auto program = CompilePattern(pattern);
    ASSERT_TRUE(program.ok()) << pattern << ": " << program.status().ToString();
    // A pattern that matches empty text takes regex_iterator's non-empty retry, where
    // libstdc++'s backtracking executor misses lazy matches; those are compared in the cases below.
    if (program->first_bytes.count() == 256) continue;
    for (int t = 0; t < 20; ++t) {
      std::string text;
      for (int len = int(rng() % 15); len > 0; --len) text += "ab-0 1"[rng() % 6];
      ASSERT_EQ(Ours(pattern, text), Reference(pattern, text)) << "/" << pattern << "/ on '" << text << "'";
      ++compared;
    }
  }
  EXPECT_GT(compared, 20000);
}

TEST(PatternProgram, MatchesAreEcmaScriptsLeftmostThenPreferred) {
  EXPECT_EQ(Ours(R"(\d{3}|\d{3}-\d{4})", "555-1234"), (Spans{{0, 3}, {4, 7}}));  // the first choice that matches
  EXPECT_EQ(Ours(R"(\d{3}-\d{4}|\d{3})", "555-1234"), (Spans{{0, 8}}));
  EXPECT_EQ(Ours("a+?", "aaa"), (Spans{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(Ours(R"(\bMRN[-: ]?[0-9]{6,10}\b)", "MRN-0012345 xMRN-7654321 MRN 9876543210"),
            (Spans{{0, 11}, {25, 39}}));
  EXPECT_EQ(Ours("^ab|ab$", "ab ab ab"), (Spans{{0, 2}, {6, 8}}));
  EXPECT_EQ(Ours(R"([[:upper:]]{2}\x2D[\d.]+)", "ID AB-1.5 cd-2"), (Spans{{3, 9}}));
  EXPECT_EQ(Ours(R"(\cJ|\u0041|\t)", "\nA\tB"), (Spans{{0, 1}, {1, 2}, {2, 3}}));
  // Empty matches are skipped; where one is found, a non-empty one is looked for there first.
  EXPECT_EQ(Ours("a*?", "aa"), (Spans{{0, 1}, {1, 2}}));
  EXPECT_EQ(Ours(R"(\B.*?)", "a1-1"), (Spans{{1, 2}}));
  EXPECT_EQ(Ours("x*", "axxb"), (Spans{{1, 3}}));
}

TEST(PatternProgram, RefusesWhatItCannotMatchWithoutBacktrackingAndSaysWhy) {
  const std::pair<const char*, const char*> refused[] = {
      {R"((a)\1)", "backreference"},
      {"a(?=b)", "lookahead"},
      {"a(?!b)", "lookahead"},
      {"(?<name>a)", "(?:...)"},
      {"a**", "quantifier after a quantifier"},
      {"*a", "nothing to repeat"},
      {"\\b+", "assertion"},
      {"a{2", "'{'"},
      {"{3}", "nothing to repeat"},
      {"[b-a]", "out of order"},
      {R"([\d-z])", "class at one end"},
      {R"(\u0100)", "above \\u00FF"},
      {R"(\q)", "unknown escape"},
      {"[[:colour:]]", "unknown class"},
      {"[abc", "without its ']'"},
      {"(abc", "without its ')'"},
      {"abc)", "unmatched ')'"},
      {"a{18446744073709551617}", "more than 9 digits"},
      {"x{2}y{1,12345678901}", "more than 9 digits"},
      {"a{3,2}", "n above m"},
  };
  for (const auto& [pattern, why] : refused) {
    auto program = CompilePattern(pattern);
    ASSERT_FALSE(program.ok()) << pattern;
    EXPECT_NE(program.status().message().find(why), std::string::npos) << pattern << ": " << program.status().message();
  }
}

TEST(PatternProgram, RepetitionIsBoundedAsItIsWrittenOut) {
  EXPECT_FALSE(CompilePattern(std::string(kMaxPatternBytes + 1, 'a')).ok());
  for (const char* pattern : {"(a{100}){100}", "[0-9]{5000}", "((a{40}){40}){40}", "(?:(?:a{999999999}){999999999})"}) {
    auto program = CompilePattern(pattern);
    ASSERT_FALSE(program.ok()) << pattern;
    EXPECT_NE(program.status().message().find("automaton"), std::string::npos) << program.status().message();
  }
  // A body that writes nothing is not copied out.
  EXPECT_TRUE(CompilePattern("(?:){999999999}x").ok());
  EXPECT_TRUE(CompilePattern("(?:[A-Z]{2}[0-9]{2}){1,3}").ok());
}

// A pattern with an open-ended repetition and no match (an internal e-mail domain) over a long
// run of the bytes it repeats: std::regex searched again from every byte, 1 s for 8 KB and
// quadratic beyond (an 8 MiB prompt: days); here one pass within a few steps a byte.
TEST(PatternProgram, ALongTextIsSearchedInOnePass) {
  const std::string letters(4 << 20, 'a');
  auto program = CompilePattern(R"([a-z0-9.]+@corp\.example)");
  ASSERT_TRUE(program.ok());
  std::vector<PatternMatch> matches;
  EXPECT_EQ(FindPatternMatches(*program, letters, 16, &matches), std::nullopt);
  EXPECT_TRUE(matches.empty());
  const std::string one = letters + "@corp.example";
  EXPECT_EQ(FindPatternMatches(*program, one, 16, &matches), std::nullopt);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].begin, 0u);
  EXPECT_EQ(matches[0].end, one.size());
}

// Where the preferred choice reads far past each match (a+b|a over a run of a: every match is
// one byte, found after reading to the run's end), the work per byte is bounded: the search
// stops and says from where the text was not searched.
TEST(PatternProgram, WorkPastItsBoundStopsTheSearchAndSaysWhere) {
  const std::string text = "xy" + std::string(100000, 'a');
  auto program = CompilePattern("a+b|a");
  ASSERT_TRUE(program.ok());
  std::vector<PatternMatch> matches;
  const std::optional<size_t> unsearched = FindPatternMatches(*program, text, 64, &matches);
  ASSERT_TRUE(unsearched.has_value());
  EXPECT_GE(*unsearched, 2u);
  EXPECT_LT(*unsearched, text.size());
  ASSERT_FALSE(matches.empty());
  EXPECT_EQ(matches.back().end, *unsearched);
  for (const PatternMatch& m : matches) EXPECT_EQ(m.end - m.begin, 1u);
  // Many repetitions held open at once over a long run of digits: the same.
  auto wide = CompilePattern("[0-9]{1,500}x");
  ASSERT_TRUE(wide.ok());
  matches.clear();
  EXPECT_TRUE(FindPatternMatches(*wide, std::string(20000, '7'), 64, &matches).has_value());
}

}  // namespace
}  // namespace kimi::policy
