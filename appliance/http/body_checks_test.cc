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

// 300,000 keys in one object cost the API's parser 94 s of CPU: refused before it, by path.
TEST(BodyChecks, RefusesObjectsPastTheMemberBounds) {
  std::string object = "{\"logit_bias\":{";
  for (size_t i = 0; i <= kMaxObjectMembers; ++i) object += (i ? ",\"" : "\"") + std::to_string(i) + "\":1";
  object += "}}";
  const Status large = CheckRequestBody(object);
  EXPECT_EQ(large.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(large.message(), "request body: $.logit_bias.1024: an object with more than 1024 members");
  std::string many = "[";
  for (size_t i = 0; i <= kMaxBodyMembers; ++i) many += i ? ",{\"a\":1}" : "{\"a\":1}";
  many += "]";
  const Status all = CheckRequestBody(many);
  EXPECT_EQ(all.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(all.message().find("more than 262144 object members in all"), std::string::npos) << all.message();
  EXPECT_TRUE(CheckRequestBody(std::string(many, 0, many.size() - 8) + "]").ok());
}

}  // namespace
}  // namespace kimi::http
