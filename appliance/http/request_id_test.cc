#include "http/request_id.h"

#include <set>

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

TEST(RequestIdTest, GeneratedIdsAreWellFormedAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewRequestId();
    ASSERT_EQ(id.size(), 4u + 24u);
    ASSERT_EQ(id.rfind("req_", 0), 0u);
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef", 4), std::string::npos) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace kimi::http
