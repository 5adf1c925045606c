#include "upstream/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::upstream {
namespace {

struct Collected {
  std::vector<SseEvent> events;
  SseParser parser{[this](const SseEvent& e) {
    events.push_back(e);
    return Status::OK();
  }};
};

// Feeds `text` cut into pieces of `step` bytes.
void FeedInSteps(SseParser& parser, const std::string& text, size_t step) {
  for (size_t i = 0; i < text.size(); i += step) ASSERT_TRUE(parser.Feed(text.substr(i, step)).ok());
}

TEST(SseParser, SameEventsWhateverTheReadBoundaries) {
  const std::string stream =
      ": keep-alive\r\n"
      "data: {\"a\":1}\r\n\r\n"
      "event: note\n"
      "data: first\n"
      "data:second\n"
      "id: 7\n"
      "\n"
      "data: \xC3\xA9t\xC3\xA9\r\r"
      "data: [DONE]\n\n";
  for (size_t step = 1; step <= stream.size(); ++step) {
    Collected c;
    FeedInSteps(c.parser, stream, step);
    ASSERT_EQ(c.events.size(), 4u) << "step " << step;
    EXPECT_EQ(c.events[0].data, "{\"a\":1}");
    EXPECT_EQ(c.events[1].event, "note");
    EXPECT_EQ(c.events[1].data, "first\nsecond");
    EXPECT_EQ(c.events[2].data, "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(c.events[3].data, "[DONE]");
    EXPECT_FALSE(c.parser.Finish());
  }
}

TEST(SseParser, CommentsAndEventsWithoutDataAreNotDispatched) {
  Collected c;
  ASSERT_TRUE(c.parser.Feed(":ping\n\n: another\n\nevent: x\n\nretry: 10\n\n").ok());
  EXPECT_TRUE(c.events.empty());
}

TEST(SseParser, EmptyDataLineIsAnEmptyEvent) {
  Collected c;
  ASSERT_TRUE(c.parser.Feed("data\n\ndata:\n\n").ok());
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].data, "");
  EXPECT_EQ(c.events[1].data, "");
}

TEST(SseParser, CutStreamIsReportedAndItsPartialEventDropped) {
  Collected c;
  ASSERT_TRUE(c.parser.Feed("data: whole\n\ndata: half").ok());
  EXPECT_EQ(c.events.size(), 1u);
  EXPECT_TRUE(c.parser.Finish());
  EXPECT_EQ(c.events.size(), 1u);
}

TEST(SseParser, HandlerErrorStopsParsing) {
  int calls = 0;
  SseParser parser([&calls](const SseEvent&) {
    ++calls;
    return Status::Corruption("bad chunk");
  });
  Status s = parser.Feed("data: 1\n\ndata: 2\n\n");
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(calls, 1);
}

TEST(SseParser, OverlongLineIsAnError) {
  SseParser parser([](const SseEvent&) { return Status::OK(); }, /*max_line_bytes=*/16);
  EXPECT_TRUE(parser.Feed("data: 0123456").ok());
  EXPECT_EQ(parser.Feed("789abcdef").code(), Status::Code::kUnavailable);  // the upstream's fault, not a 429
}

TEST(SseParser, AnEventOfManyShortDataLinesIsBoundedToo) {
  int events = 0;
  SseParser parser([&events](const SseEvent&) {
    ++events;
    return Status::OK();
  }, /*max_line_bytes=*/16);
  EXPECT_TRUE(parser.Feed("data: 0123\ndata: 4567\ndata: 89abc\n").ok());  // 15 bytes joined
  EXPECT_EQ(parser.Feed("data: b\n").code(), Status::Code::kUnavailable);
  EXPECT_EQ(events, 0);
}

}  // namespace
}  // namespace kimi::upstream
