// response_format (the verifier's tests/k3_features/test_response_format.py request side).
#include "api/request/response_format_rules.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::ChatWith;
using testing::Rejected;

TEST(ResponseFormatRulesTest, TextAndJsonObjectAreAccepted) {
  EXPECT_EQ(ChatWith("{}")->response_format, "text");
  EXPECT_EQ(ChatWith(R"({"response_format": {"type": "text"}})")->response_format, "text");
  EXPECT_EQ(ChatWith(R"({"response_format": {"type": "json_object"}})")->response_format, "json_object");
}

TEST(ResponseFormatRulesTest, JsonSchemaNeedsNameAndSchema) {
  auto r = ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "capital_answer",
    "strict": true, "schema": {"type": "object", "properties": {"capital": {"type": "string"}}, "required": ["capital"]}}}})");
  ASSERT_TRUE(Accepted(r));
  EXPECT_EQ(r->response_format, "json_schema");
  EXPECT_TRUE(r->response_schema_strict);
  EXPECT_EQ(r->response_schema["required"], Json::array({"capital"}));

  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema"}})"), "response_format.json_schema",
                       "is required"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}})"),
                       "response_format.json_schema.name", "is required"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a"}}})"),
                       "response_format.json_schema.schema", "is required"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": "x"}}})"),
                       "response_format.json_schema.schema", "must be an object"));
  EXPECT_TRUE(Rejected(
      ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {}, "strict": "yes"}}})"),
      "response_format.json_schema.strict", "true or false"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}}})"),
                       "response_format.json_schema.name"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": []}})"),
                       "response_format.json_schema"));
}

TEST(ResponseFormatRulesTest, OtherTypesAreRejected) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {"type": "yaml"}})"), "response_format.type",
                       "\"text\", \"json_object\" or \"json_schema\""));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": {}})"), "response_format.type", "is required"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"response_format": "json_object"})"), "response_format", "must be an object"));
}

// Schemas that crashed or hung the engine's compiler are refused here, before any backend,
// naming the field: a 400, not a dead daemon.
TEST(ResponseFormatRulesTest, SchemasBeyondTheLimitsAreRefusedNamingTheField) {
  auto with_schema = [](const std::string& schema) {
    return ChatWith(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": )" + schema + "}}}");
  };
  for (const char* schema : {R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})",
                             R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"oneOf":[{"$ref":"#/$defs/a"}]})",
                             R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"anyOf":[{"$ref":"#/$defs/a"}]})"}) {
    EXPECT_TRUE(Rejected(with_schema(schema), "response_format.json_schema.schema", "refers to itself")) << schema;
  }
  std::string huge = R"({"enum":[)";
  for (int i = 0; i < 5000; ++i) huge += (i ? "," : "") + std::to_string(i);
  EXPECT_TRUE(Rejected(with_schema(huge + "]}"), "response_format.json_schema.schema", "enum/const values"));
  // A recursive tree consumes input at every turn: accepted.
  EXPECT_TRUE(Accepted(with_schema(
      R"({"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"})")));
}

}  // namespace
}  // namespace kimi::api::request
