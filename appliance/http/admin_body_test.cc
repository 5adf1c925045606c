#include "http/admin_body.h"

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

// An integer field holds an int64: 2^63 read as int64 unchecked was a negative limit or budget,
// refused as "must not be negative" for a positive input.
TEST(AdminBody, IntegerFieldsAreWithinInt64) {
  std::optional<std::string> bad;
  EXPECT_TRUE(ParseBody(R"({"n": 9223372036854775807})", {"n"}, {}, {"n"}, &bad).ok());
  EXPECT_TRUE(ParseBody(R"({"n": -9223372036854775808})", {"n"}, {}, {"n"}, &bad).ok());
  for (const char* body : {R"({"n": 9223372036854775808})", R"({"n": 18446744073709551615})", R"({"n": 1.5})",
                           R"({"n": "1"})"}) {
    Result<nlohmann::json> parsed = ParseBody(body, {"n"}, {}, {"n"}, &bad);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(bad, "n");
    EXPECT_NE(parsed.status().message().find("must be an integer"), std::string::npos) << parsed.status().ToString();
  }
}

}  // namespace
}  // namespace kimi::http
