#include "kimi/tokenizer_utf8.h"

#include <gtest/gtest.h>

namespace kimi::text {
namespace {

TEST(Utf8Test, AcceptsValidText) {
  EXPECT_TRUE(ValidateUtf8("").ok());
  EXPECT_TRUE(ValidateUtf8("plain ascii that is longer than eight bytes").ok());
  EXPECT_TRUE(ValidateUtf8("Việt 中文 😀 \U0010FFFF \uFFFD").ok());
}

TEST(Utf8Test, RejectsEveryKindOfMalformedSequence) {
  const char* bad[] = {
      "\x80",              // lone continuation
      "\xC0\x80",          // overlong NUL
      "\xC1\xBF",          // overlong
      "\xE0\x80\x80",      // overlong three-byte
      "\xED\xA0\x80",      // surrogate U+D800
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xF5\x80\x80\x80",  // invalid lead byte
      "\xFF",
      "\xE4\xB8",          // truncated at the end
      "abcdefgh\xE4\xB8x", // truncated in the middle, after the ASCII fast path
  };
  for (const char* b : bad) {
    const Status s = ValidateUtf8(b);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << b;
  }
  EXPECT_NE(ValidateUtf8("abcdefgh\xE4\xB8x").message().find("offset 8"), std::string::npos);
}

TEST(Utf8Test, DecodeDistinguishesTruncatedFromInvalid) {
  EXPECT_EQ(DecodeUtf8At("\xE4\xB8", 0).kind, Utf8Kind::kTruncated);
  EXPECT_EQ(DecodeUtf8At("\xE4\xB8", 0).length, 2);
  EXPECT_EQ(DecodeUtf8At("\xE4x", 0).kind, Utf8Kind::kInvalid);
  EXPECT_EQ(DecodeUtf8At("\xE4x", 0).length, 1);
  const Utf8Step han = DecodeUtf8At("\xE4\xB8\xAD", 0);
  EXPECT_EQ(han.kind, Utf8Kind::kComplete);
  EXPECT_EQ(han.code_point, U'中');
}

TEST(Utf8Test, ReplacementUsesMaximalSubparts) {
  EXPECT_EQ(ReplaceInvalidUtf8("a\xE4\xB8z"), "a\uFFFDz");      // one U+FFFD for the subpart
  EXPECT_EQ(ReplaceInvalidUtf8("\xC0\x80"), "\uFFFD\uFFFD");     // two invalid bytes
  EXPECT_EQ(ReplaceInvalidUtf8("ok 中"), "ok 中");
}

TEST(Utf8Test, AppendEncodesEveryLength) {
  std::string s;
  for (char32_t cp : {U'a', U'é', U'中', U'😀'}) AppendUtf8(cp, &s);
  EXPECT_EQ(s, "aé中😀");
}

}  // namespace
}  // namespace kimi::text
