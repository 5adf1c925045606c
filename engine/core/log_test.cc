#include "kimi/log.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kimi::log {
namespace {

TEST(LogTest, JsonLineHasFieldsInOrder) {
  std::string line = FormatJson(Level::kWarn, "slow client", {{"request_id", "r-1"}, {"ms", 1500}, {"tls", true}},
                                "2026-01-01T00:00:00.000Z");
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["msg"], "slow client");
  EXPECT_EQ(j["request_id"], "r-1");
  EXPECT_EQ(j["ms"], 1500);
  EXPECT_EQ(j["tls"], true);
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogTest, InvalidUtf8IsReplacedNotThrown) {
  std::string bad = "\xff\xfe";
  std::string line = FormatJson(Level::kInfo, bad, {{"k", bad}}, "t");
  EXPECT_NO_THROW(nlohmann::json::parse(line));
}

TEST(LogTest, TextLineEscapesEveryControlCharacter) {
  // A carriage return or an escape sequence in a value (a decoded path, a header) must not
  // rewrite the terminal line or forge a field.
  const std::string line = FormatText(Level::kInfo, "request",
                                      {{"path", "/x\r2026 ERROR forged=1"}, {"ua", "a\x1b[2Jb"}, {"bad", "\xff"}},
                                      "t");
  for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << line;
  EXPECT_NE(line.find(R"(path="/x\r2026 ERROR forged=1")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"(ua="a\u001b[2Jb")"), std::string::npos) << line;
}

// Past ASCII too: NEL and CSI (C1 controls), the line separator and a bidi override reach a
// terminal or a log viewer as a line break, a colour or reversed text; both formats write them
// as \u escapes (the JSON line still reads back as the same text).
TEST(LogTest, BothFormatsEscapeWhatBreaksOrDisguisesALineBeyondAscii) {
  const std::string value = "a\u0085NEL\u009b31mRED\u2028LS\u202eRLO\u2066iso x\u00e9\u4e2d";
  const std::string text = FormatText(Level::kInfo, "request fields ignored", {{"fields", value}}, "t");
  const std::string json = FormatJson(Level::kInfo, "request fields ignored", {{"fields", value}}, "t");
  for (const std::string& line : {text, json}) {
    for (const char* raw : {"\u0085", "\u009b", "\u2028", "\u202e", "\u2066"}) {
      EXPECT_EQ(line.find(raw), std::string::npos) << line;
    }
    EXPECT_NE(line.find("\\u202e"), std::string::npos) << line;
    EXPECT_NE(line.find("x\u00e9\u4e2d"), std::string::npos) << line;  // other text as it is
  }
  EXPECT_EQ(nlohmann::json::parse(json)["fields"], value);
}

TEST(LogTest, ParseLevel) {
  Level l;
  ASSERT_TRUE(ParseLevel("debug", &l));
  EXPECT_EQ(l, Level::kDebug);
  EXPECT_FALSE(ParseLevel("verbose", &l));
}

}  // namespace
}  // namespace kimi::log
