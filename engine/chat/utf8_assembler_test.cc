#include "chat/utf8_assembler.h"

#include <gtest/gtest.h>

namespace kimi::chat {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string Whole(std::string_view bytes) {
  Utf8Assembler a;
  std::string out = a.Push(bytes);
  return out + a.Flush();
}

TEST(Utf8Assembler, HoldsBackASplitCharacterUntilComplete) {
  Utf8Assembler a;
  EXPECT_EQ(a.Push("a\xF0\x9F"), "a");
  EXPECT_TRUE(a.has_pending());
  EXPECT_EQ(a.Push("\x98"), "");
  EXPECT_EQ(a.Push("\x80z"), "\xF0\x9F\x98\x80z");
  EXPECT_FALSE(a.has_pending());
  EXPECT_EQ(a.replacements(), 0u);
}

TEST(Utf8Assembler, ReplacesInvalidBytesPerMaximalSubpart) {
  EXPECT_EQ(Whole("\xC0\xAF"), kFffd + kFffd);
  EXPECT_EQ(Whole("\xE0\x80x"), kFffd + kFffd + "x");
  EXPECT_EQ(Whole("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // a surrogate
  EXPECT_EQ(Whole("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(Whole("\xE4\xB8x"), kFffd + "x");
  EXPECT_EQ(Whole("\xE4\xB8"), kFffd);  // cut off at the end of the stream
  EXPECT_EQ(Whole("\xFF"), kFffd);
}

TEST(Utf8Assembler, OutputDoesNotDependOnWhereTheInputIsCut) {
  const std::string input = "a\xC3\xA9\xE6\x9D\xB1\xF0\x9F\x91\xA9\xE2\x80\x8D\xC0\xE4\xB8\xFF\xF0\x9F\x98z\xE4";
  const std::string expected = Whole(input);
  for (size_t i = 0; i <= input.size(); ++i) {
    for (size_t j = i; j <= input.size(); ++j) {
      Utf8Assembler a;
      std::string out = a.Push(input.substr(0, i));
      out += a.Push(input.substr(i, j - i));
      out += a.Push(input.substr(j));
      out += a.Flush();
      ASSERT_EQ(out, expected) << "cut at " << i << " and " << j;
    }
  }
}

}  // namespace
}  // namespace kimi::chat
