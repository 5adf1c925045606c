#include "audit/stream_links.h"

#include <gtest/gtest.h>

#include <map>

namespace kimi::audit {
namespace {

StreamLink Start(uint64_t seq, const std::string& request_id) {
  return StreamLink{seq, kRecordFormatVersion, request_id, std::string(kOutcomeStreamStarted), kNoStartSeq};
}

StreamLink End(uint64_t seq, const std::string& request_id, int64_t start_seq, const char* outcome = "ok") {
  return StreamLink{seq, kRecordFormatVersion, request_id, outcome, start_seq};
}

StreamLink Whole(uint64_t seq) { return StreamLink{seq, kRecordFormatVersion, "req-w" + std::to_string(seq), "ok", kNoStartSeq}; }

// The problem Next() reports (empty when none).
std::string Check(StreamLinks& links, const StreamLink& record) {
  Result<std::optional<std::string>> problem = links.Next(record);
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  return problem.ok() && *problem ? **problem : std::string();
}

TEST(StreamLinks, InterleavedStreamsAndTheirEndsKeepTheRule) {
  StreamLinks links;
  EXPECT_EQ(Check(links, Start(0, "a")), "");
  EXPECT_EQ(Check(links, Start(1, "b")), "");
  EXPECT_EQ(Check(links, Whole(2)), "");
  EXPECT_EQ(Check(links, End(3, "b", 1)), "");
  EXPECT_EQ(Check(links, End(4, "a", 0, "interrupted")), "");
}

TEST(StreamLinks, AnEndThatNamesNoOpenStartOfItsRequestIsReported) {
  StreamLinks links;
  Check(links, Start(0, "a"));
  Check(links, Whole(1));
  EXPECT_NE(Check(links, End(2, "a", 1)).find("not an open stream's start"), std::string::npos);  // not a start
  EXPECT_NE(Check(links, End(3, "b", 0)).find("another request"), std::string::npos);
  EXPECT_NE(Check(links, End(4, "a", 0)).find("not an open stream's start"), std::string::npos);  // ended already
  EXPECT_NE(Check(links, End(5, "a", 5)).find("earlier record"), std::string::npos);
  EXPECT_NE(Check(links, End(6, "a", -7)).find("earlier record"), std::string::npos);
  StreamLink start_with_link = Start(7, "c");
  start_with_link.start_seq = 0;
  EXPECT_NE(Check(links, start_with_link).find("carries start_seq"), std::string::npos);
}

TEST(StreamLinks, RecordsBeforeVersion4HaveNoLinks) {
  StreamLinks links;
  StreamLink old = End(0, "a", 0);
  old.version = 3;
  old.start_seq = 0;
  EXPECT_EQ(Check(links, old), "");
}

TEST(StreamLinks, StartsBeforeThePassAreLookedUpAndEndedOnce) {
  std::map<uint64_t, StreamLink> before = {{3, Start(3, "a")}, {4, Whole(4)}};
  int lookups = 0;
  StreamLinks links([&](uint64_t seq) -> Result<std::optional<StreamLink>> {
    ++lookups;
    auto it = before.find(seq);
    return it == before.end() ? std::optional<StreamLink>() : std::optional<StreamLink>(it->second);
  });
  EXPECT_EQ(Check(links, End(10, "a", 3, "interrupted")), "");
  EXPECT_NE(Check(links, End(11, "a", 3)).find("a second time"), std::string::npos);
  EXPECT_NE(Check(links, End(12, "x", 4)).find("not a stream start record"), std::string::npos);
  EXPECT_NE(Check(links, End(13, "x", 2)).find("not a stream start record"), std::string::npos);  // no such record
  EXPECT_EQ(lookups, 3);
}

TEST(StreamLinks, WithoutALookupStartsBeforeThePassAreTrustedButEndedOnce) {
  StreamLinks links;
  EXPECT_EQ(Check(links, End(10, "a", 3)), "");
  EXPECT_NE(Check(links, End(11, "a", 3)).find("a second time"), std::string::npos);
}

TEST(StreamLinks, AGapInThePassMakesAnUnseenStartUnknownNotBad) {
  StreamLinks links;
  Check(links, Whole(0));
  Check(links, Whole(5));  // seqs 1 to 4 not in the pass (a filtered range)
  EXPECT_EQ(Check(links, End(6, "a", 2)), "");
}

}  // namespace
}  // namespace kimi::audit
