// StopMatcher tests: stop strings split across pieces, held text released when the match
// fails, the earliest of several stops wins, text after the stop is dropped, and a fake
// detokeniser (token id -> text piece) driven the way the scheduler drives it.
#include "runtime/stop_matcher.h"

#include <gtest/gtest.h>

#include <map>

namespace kimi::runtime {
namespace {

// Feeds pieces until a stop; returns what a client would see and whether it stopped.
std::pair<std::string, bool> Shown(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  StopMatcher matcher(std::move(stops));
  std::string shown;
  for (const auto& p : pieces) {
    if (matcher.Push(p, &shown)) return {shown, true};
  }
  matcher.Flush(&shown);
  return {shown, false};
}

TEST(StopMatcherTest, StopSplitAcrossPiecesIsRemoved) {
  EXPECT_EQ(Shown({"###"}, {"Hello #", "#", "# world"}), std::make_pair(std::string("Hello "), true));
  EXPECT_EQ(Shown({"END"}, {"E", "N", "D"}), std::make_pair(std::string(""), true));
}

TEST(StopMatcherTest, HeldTextIsReleasedWhenTheMatchFails) {
  StopMatcher matcher({"</stop>"});
  std::string shown;
  EXPECT_FALSE(matcher.Push("a</st", &shown));
  EXPECT_EQ(shown, "a");  // "</st" is held
  EXPECT_EQ(matcher.held_bytes(), 4u);
  EXPECT_FALSE(matcher.Push("ep>", &shown));
  EXPECT_EQ(shown, "a</step>");
  EXPECT_EQ(matcher.held_bytes(), 0u);
}

TEST(StopMatcherTest, HeldTextIsReleasedAtTheEnd) {
  EXPECT_EQ(Shown({"STOP"}, {"abc ST"}), std::make_pair(std::string("abc ST"), false));
}

TEST(StopMatcherTest, EarliestOfSeveralStopsWins) {
  EXPECT_EQ(Shown({"world", "lo w"}, {"hel", "lo world"}), std::make_pair(std::string("hel"), true));
  // A long stop still pending does not hide a short one that completes earlier.
  EXPECT_EQ(Shown({"abcdef", "cd"}, {"xabc", "dzz"}), std::make_pair(std::string("xab"), true));
}

TEST(StopMatcherTest, OverlappingPrefixesAreFound) {
  // "aab": after "aa" the tail "a" and "aa" are both possible starts.
  EXPECT_EQ(Shown({"aab"}, {"a", "a", "a", "b", "c"}), std::make_pair(std::string("a"), true));
}

TEST(StopMatcherTest, MultiByteTextIsReleasedWhole) {
  EXPECT_EQ(Shown({"é!"}, {"caf", "é", "?", "é", "!"}), std::make_pair(std::string("café?"), true));
}

TEST(StopMatcherTest, FakeDetokeniserDrivenLikeTheScheduler) {
  const std::map<int, std::string> vocab = {{1, "The"}, {2, " an"}, {3, "swer"}, {4, " is"}, {5, " 4"}, {6, "2."}};
  StopMatcher matcher({"answer is"});
  std::string shown;
  bool stopped = false;
  for (int id : {1, 2, 3, 4, 5, 6}) {
    if ((stopped = matcher.Push(vocab.at(id), &shown))) break;
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "The ");
}

TEST(StopMatcherTest, NoStopsPassesEverythingThrough) {
  EXPECT_EQ(Shown({}, {"a", "b"}), std::make_pair(std::string("ab"), false));
  EXPECT_EQ(Shown({""}, {"a", "b"}), std::make_pair(std::string("ab"), false));
}

}  // namespace
}  // namespace kimi::runtime
