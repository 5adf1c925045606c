#include "kimi/sse_frame.h"

#include <gtest/gtest.h>

namespace kimi {
namespace {

TEST(SseDataFrame, FramesTheTextAndEscapesOnlyTheThreeLineBreaks) {
  EXPECT_EQ(SseDataFrame(R"({"a":"b"})"), "data: {\"a\":\"b\"}\n\n");
  EXPECT_EQ(SseDataFrame("{\"a\":\"x\u2028y\u2029z\u0085\"}"), "data: {\"a\":\"x\\u2028y\\u2029z\\u0085\"}\n\n");
  // U+00C5 (C3 85) and U+2027 / U+202A (E2 80 A7 / AA) share bytes with them and pass unchanged.
  const std::string neighbours = "{\"a\":\"\u00C5\u2027\u202A\"}";
  EXPECT_EQ(SseDataFrame(neighbours), "data: " + neighbours + "\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

}  // namespace
}  // namespace kimi
