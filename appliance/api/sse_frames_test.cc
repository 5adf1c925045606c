#include "api/sse_frames.h"

#include <gtest/gtest.h>

#include <string>

namespace kimi::api {
namespace {

using Json = nlohmann::ordered_json;

// The JSON of a frame: what follows "data: " up to the blank line that ends it.
Json FramePayload(const std::string& frame) {
  EXPECT_EQ(frame.rfind("data: ", 0), 0u) << frame;
  EXPECT_EQ(frame.substr(frame.size() - 2), "\n\n") << frame;
  return Json::parse(frame.substr(6, frame.size() - 8));
}

TEST(SseFrameTest, PlainPayloadIsOneDataLine) {
  EXPECT_EQ(SseFrame(Json{{"content", "a“b”—c"}}), "data: {\"content\":\"a“b”—c\"}\n\n");
}

TEST(SseFrameTest, UnicodeLineBreaksAreEscapedSoTheFrameStaysOneLine) {
  const std::string text = "a\u2028b\u2029c\u0085d “\u2028”";
  const std::string frame = SseFrame(Json{{"content", text}, {"reasoning_content", "\u2029"}});
  EXPECT_EQ(
      frame,
      "data: {\"content\":\"a\\u2028b\\u2029c\\u0085d “\\u2028”\",\"reasoning_content\":\"\\u2029\"}\n\n");
  for (const char* raw : {"\u2028", "\u2029", "\u0085"}) EXPECT_EQ(frame.find(raw), std::string::npos) << raw;
  const Json payload = FramePayload(frame);
  EXPECT_EQ(payload["content"], text);
  EXPECT_EQ(payload["reasoning_content"], "\u2029");
}

TEST(SseFrameTest, NeighboursOfTheLineBreaksPassUnchanged) {
  // U+00C5 (C3 85) and U+2027 / U+202A (E2 80 A7 / AA) share bytes with the escaped characters.
  const std::string text = "\u00C5\u2027\u202A\u00A9";
  const std::string frame = SseFrame(Json{{"content", text}});
  EXPECT_EQ(frame, "data: {\"content\":\"" + text + "\"}\n\n");
  EXPECT_EQ(FramePayload(frame)["content"], text);
}

}  // namespace
}  // namespace kimi::api
