#include "http/request_id.h"

#include <set>

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

TEST(RequestIdTest, AcceptsSaneIncomingIds) {
  EXPECT_TRUE(IsAcceptableRequestId("abc-123_x.y:z"));
  EXPECT_TRUE(IsAcceptableRequestId(std::string(128, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId(""));
  EXPECT_FALSE(IsAcceptableRequestId(std::string(129, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId("a b"));
  EXPECT_FALSE(IsAcceptableRequestId("a\r\nSet-Cookie: x"));
  EXPECT_FALSE(IsAcceptableRequestId("\"quoted\""));
  EXPECT_FALSE(IsAcceptableRequestId("caf\xc3\xa9"));
  EXPECT_EQ(ChooseRequestId("client-7"), "client-7");
  EXPECT_NE(ChooseRequestId("bad id"), "bad id");
}

TEST(RequestIdTest, GeneratedIdsAreWellFormedAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewRequestId();
    ASSERT_EQ(id.size(), 4u + 24u);
    ASSERT_EQ(id.rfind("req_", 0), 0u);
    ASSERT_TRUE(IsAcceptableRequestId(id));
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace kimi::http
