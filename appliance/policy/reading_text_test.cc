#include "policy/reading_text.h"

#include <gtest/gtest.h>

namespace kimi::policy {
namespace {

std::string_view Back(const ReadingText& reading, size_t begin, size_t end) {
  const auto [first, last] = reading.OriginalRange(begin, end);
  return reading.original().substr(first, last - first);
}

TEST(ReadingTextTest, AsciiIsReadAsItIsWithoutACopy) {
  const std::string text = "card 4111 1111 1111 1111, mail a@b.io";
  ReadingText reading(text);
  EXPECT_EQ(reading.text().data(), text.data());
  EXPECT_EQ(Back(reading, 5, 24), "4111 1111 1111 1111");
}

TEST(ReadingTextTest, TextWithNothingToReadOtherwiseIsTheOriginal) {
  const std::string text = "Số thẻ của tôi là gì? 你好";
  ReadingText reading(text);
  EXPECT_EQ(reading.text().data(), text.data());
}

TEST(ReadingTextTest, DigitsOfEveryScriptAreReadAsAsciiDigits) {
  // Full-width, Arabic-Indic, Devanagari, Bengali, Thai, mathematical bold (outside the BMP).
  EXPECT_EQ(ReadAsDetectorsDo("４１１１"), "4111");
  EXPECT_EQ(ReadAsDetectorsDo("\u0664\u0661\u0661\u0661"), "4111");
  EXPECT_EQ(ReadAsDetectorsDo("\u096A\u0967\u0967\u0967"), "4111");
  EXPECT_EQ(ReadAsDetectorsDo("\u09EA\u09E7"), "41");
  EXPECT_EQ(ReadAsDetectorsDo("\u0E54\u0E51"), "41");
  EXPECT_EQ(ReadAsDetectorsDo("\U0001D7D2\U0001D7CF"), "41");
  // Compatibility digits that are not decimal digits: circled, superscript.
  EXPECT_EQ(ReadAsDetectorsDo("\u2463\u00B9"), "41");
}

TEST(ReadingTextTest, SpacesDashesAndInvisibleCharactersReadAsASeparatorOrNothing) {
  EXPECT_EQ(ReadAsDetectorsDo("4111\u00A01111\u202F1111\u30001111"), "4111 1111 1111 1111");
  EXPECT_EQ(ReadAsDetectorsDo("123\u2010" "45\u2212" "6789"), "123-45-6789");
  EXPECT_EQ(ReadAsDetectorsDo("123\uFF0D45\u2013" "6789"), "123-45-6789");
  EXPECT_EQ(ReadAsDetectorsDo("41\u200B11\u200C11\u200D11\u206011\u00AD11\uFEFF11\u202E11"), "4111111111111111");
  EXPECT_EQ(ReadAsDetectorsDo("a\u2028b\u0085c"), "a\nb\nc");
  // Marks on a digit: an accent, a keycap (variation selector and enclosing mark).
  EXPECT_EQ(ReadAsDetectorsDo("4\u03011\u0308 4\uFE0F\u20E31\uFE0F\u20E3"), "41 41");
}

TEST(ReadingTextTest, FullWidthLettersAndPunctuationAndTagCharactersReadAsAscii) {
  EXPECT_EQ(ReadAsDetectorsDo("ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ"), "alice@example.com");
  EXPECT_EQ(ReadAsDetectorsDo("ＧＢ８２ＷＥＳＴ"), "GB82WEST");
  // Unicode tags U+E0020..U+E007E spell ASCII invisibly ("ASCII smuggling").
  EXPECT_EQ(ReadAsDetectorsDo("x\U000E0034\U000E0031\U000E0041y"), "x41Ay");
}

TEST(ReadingTextTest, LettersOfOtherScriptsAndInvalidBytesStay) {
  EXPECT_EQ(ReadAsDetectorsDo("đường Ωμέγα"), "đường Ωμέγα");
  const std::string invalid = std::string("a\xFF\xC3") + "b";
  EXPECT_EQ(ReadAsDetectorsDo(invalid), invalid);
}

TEST(ReadingTextTest, FindingsMapBackToWholeCharactersOfTheOriginal) {
  const std::string text = "thẻ ４１１１\u00A0１１１１ x";
  ReadingText reading(text);
  ASSERT_EQ(reading.text(), "thẻ 4111 1111 x");
  const size_t at = reading.text().find('4');
  EXPECT_EQ(Back(reading, at, at + 9), "４１１１\u00A0１１１１");
  EXPECT_EQ(Back(reading, at + 1, at + 2), "１");
  // A range that starts or ends inside a kept multi-byte character takes the whole character.
  EXPECT_EQ(Back(reading, 3, 4), "ẻ");
  EXPECT_EQ(Back(reading, 0, 3), "thẻ");
  // Characters read as nothing inside a range are part of it.
  const std::string hidden = "41\u200B11";
  ReadingText hidden_reading(hidden);
  ASSERT_EQ(hidden_reading.text(), "4111");
  EXPECT_EQ(Back(hidden_reading, 0, 4), hidden);
  EXPECT_EQ(Back(hidden_reading, 2, 4), "11");
}

TEST(ReadingTextTest, TheWayBackKeepsOrder) {
  const std::string text = "a\u200B\u200B１b\u00ADc\uFF0Dd";
  ReadingText reading(text);
  ASSERT_EQ(reading.text(), "a1bc-d");
  size_t previous = 0;
  for (size_t i = 0; i <= reading.text().size(); ++i) {
    const auto [first, last] = reading.OriginalRange(i, i);
    EXPECT_GE(first, previous) << i;
    EXPECT_LE(first, last);
    previous = first;
  }
  EXPECT_EQ(reading.OriginalRange(reading.text().size(), reading.text().size()).first, text.size());
}

// The end of the text is no character to widen: the byte past it (here a continuation byte of
// the buffer the text is cut from) was read (found by the redaction fuzz target).
TEST(ReadingTextTest, TheEndIsNotWidenedByTheBytePastIt) {
  const std::string buffer = "a\uFF1F\u00E9";
  const std::string_view text(buffer.data(), buffer.size() - 1);  // ends before é's last byte
  ReadingText reading(text);
  ASSERT_EQ(reading.text().substr(0, 2), "a?");
  const auto [first, last] = reading.OriginalRange(reading.text().size(), reading.text().size());
  EXPECT_EQ(first, text.size());
  EXPECT_EQ(last, text.size());
}

}  // namespace
}  // namespace kimi::policy
