#include "http/body_checks.h"

#include <string>

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

TEST(BodyChecks, RefusesNestingOnlyBeyondTheBound) {
  const std::string at_bound = std::string(kMaxBodyNesting, '[') + std::string(kMaxBodyNesting, ']');
  EXPECT_TRUE(CheckRequestBody(at_bound).ok());
  const std::string beyond = "[" + at_bound + "]";
  Status refused = CheckRequestBody(beyond);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("nested deeper than 256"), std::string::npos);
}

// {"role":"user","role":"admin"} created an admin key: the handlers' parser keeps the last copy.
TEST(BodyChecks, RefusesAKeyRepeatedInOneObject) {
  const Status refused = CheckRequestBody(R"({"name":"dup","role":"user","role":"admin"})");
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused.message(), "request body: $.role: the key appears twice in one object");
  EXPECT_FALSE(CheckRequestBody(R"({"messages":[{"role":"user","content":"a","content":"b"}]})").ok());
  EXPECT_TRUE(CheckRequestBody(R"({"messages":[{"role":"user"},{"role":"assistant"}]})").ok());
  EXPECT_TRUE(CheckRequestBody("").ok());          // no body
  EXPECT_TRUE(CheckRequestBody("not json").ok());  // the handler refuses it
}

}  // namespace
}  // namespace kimi::http
