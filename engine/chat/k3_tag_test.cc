#include "chat/k3_tag.h"

#include <gtest/gtest.h>

namespace kimi::chat {
namespace {

TEST(K3Tag, ParsesNameAndUnescapesAttributes) {
  auto tag = ParseK3TagHeader(R"(call tool="we&amp;ird&quot;name" index="1")");
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->name, "call");
  ASSERT_NE(tag->Find("tool"), nullptr);
  EXPECT_EQ(*tag->Find("tool"), "we&ird\"name");
  EXPECT_EQ(*tag->Find("index"), "1");
  EXPECT_EQ(tag->Find("missing"), nullptr);
  // The template escapes & first, so a literal "&quot;" was written as "&amp;quot;".
  EXPECT_EQ(*ParseK3TagHeader(R"(a k="&amp;quot;")")->Find("k"), "&quot;");
  EXPECT_EQ(*ParseK3TagHeader(R"(a k="")")->Find("k"), "");
  EXPECT_EQ(ParseK3TagHeader("think")->attributes.size(), 0u);
}

TEST(K3Tag, RejectsHeadersOffTheGrammar) {
  for (const char* header : {"", " a", "a ", "a b", "a b=\"1", "a b=\"1\"c", "a =\"1\"", "a b=1", "a\"b"}) {
    EXPECT_FALSE(ParseK3TagHeader(header).has_value()) << header;
  }
}

}  // namespace
}  // namespace kimi::chat
