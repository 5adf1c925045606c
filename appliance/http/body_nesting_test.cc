#include "http/body_nesting.h"

#include <string>

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

TEST(BodyNesting, RefusesOnlyBeyondTheBound) {
  const std::string at_bound = std::string(kMaxBodyNesting, '[') + std::string(kMaxBodyNesting, ']');
  EXPECT_TRUE(CheckBodyNesting(at_bound).ok());
  const std::string beyond = "[" + at_bound + "]";
  Status refused = CheckBodyNesting(beyond);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("nested deeper than 256"), std::string::npos);
}

}  // namespace
}  // namespace kimi::http
