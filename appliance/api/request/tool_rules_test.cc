// Global and dynamic tools, tool_choice, and the two validation passes (the verifier's
// tests/k3_features/test_dynamic_tools.py and test_tool_choice.py, case for case).
#include "api/request/tool_rules.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::Chat;
using testing::ChatBody;
using testing::Rejected;

Json Fn(const std::string& name) {
  return {{"type", "function"},
          {"function", {{"name", name}, {"description", "A tool."}, {"parameters", {{"type", "object"}, {"properties", Json::object()}}}}}};
}

Json Weather() {
  return Json::parse(R"({"type": "function", "function": {"name": "get_weather", "description": "Get the weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}})");
}

Json User(const std::string& text = "hello") { return {{"role", "user"}, {"content", text}}; }
Json DynamicSystem(Json tools, Json content = "") {
  return {{"role", "system"}, {"content", std::move(content)}, {"tools", std::move(tools)}};
}

Result<ValidatedRequest> WithMessages(Json messages, Json fields = Json::object()) {
  fields["messages"] = std::move(messages);
  return Chat(ChatBody(fields));
}

TEST(ToolRulesTest, DynamicToolsAreAcceptedInAnySystemMessageWithEmptyContent) {
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Weather()}), User()}, {{"tool_choice", "required"}})));
  EXPECT_TRUE(Accepted(WithMessages({{{"role", "system"}, {"content", "You are helpful."}}, User("hi"),
                                     {{"role", "assistant"}, {"content", "Hello!"}}, DynamicSystem({Weather()}), User()},
                                    {{"tool_choice", "required"}})));
  EXPECT_TRUE(Accepted(WithMessages({User(), DynamicSystem({Weather()})}, {{"tool_choice", "required"}})));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Fn("get_weather"), Fn("get_time"), Fn("get_news")}), User()})));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Fn("get_weather")}), DynamicSystem({Fn("get_time")}), User()})));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Weather()}, nullptr), User()})));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Weather()}, Json::array()), User()})));
  Json strict_false = Weather();
  strict_false["function"]["strict"] = false;
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({strict_false}), User()})));
}

TEST(ToolRulesTest, GlobalAndDynamicToolsCoexist) {
  auto r = WithMessages({DynamicSystem({Weather()}), User()},
                        {{"tools", {Fn("get_stock_price")}}, {"tool_choice", "required"}});
  ASSERT_TRUE(Accepted(r));
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0].name, "get_stock_price");
  EXPECT_FALSE(r->tools[0].dynamic);
  EXPECT_EQ(r->tools[1].name, "get_weather");
  EXPECT_TRUE(r->tools[1].dynamic);
}

TEST(ToolRulesTest, ToolsOnUserOrAssistantMessagesAreRejected) {
  Json user_with_tools = {{"role", "user"}, {"content", "hi"}, {"tools", {Weather()}}};
  EXPECT_TRUE(Rejected(WithMessages({user_with_tools, User()}), "messages[0].tools", "only in a system message"));
  Json assistant_with_tools = {{"role", "assistant"}, {"content", "hello"}, {"tools", {Weather()}}};
  EXPECT_TRUE(Rejected(WithMessages({User("hi"), assistant_with_tools, User()}), "messages[1].tools"));
  Json tool_with_tools = {{"role", "tool"}, {"content", "r"}, {"tool_call_id", "c"}, {"tools", Json::array()}};
  EXPECT_TRUE(Rejected(WithMessages({User(), tool_with_tools}), "messages[1].tools"));
}

TEST(ToolRulesTest, NonEmptySystemContentWithToolsIsRejected) {
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Weather()}, "not empty"), User()}), "messages[0].content",
                       "must be empty in a system message that declares tools"));
  Json parts = Json::array({{{"type", "text"}, {"text", "x"}}});
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Weather()}, parts), User()}), "messages[0].content"));
  // No tools declared: content is free.
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem(Json::array(), "not empty"), User()})));
}

TEST(ToolRulesTest, MissingTypeFunctionOrNameIsRejected) {
  Json no_type = Fn("good_tool");
  no_type.erase("type");
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({no_type}), User()}), "messages[0].tools[0].type", "is required"));
  Json no_function = Fn("good_tool");
  no_function.erase("function");
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({no_function}), User()}), "messages[0].tools[0].function", "is required"));
  Json no_name = Fn("good_tool");
  no_name["function"].erase("name");
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({no_name}), User()}), "messages[0].tools[0].function.name", "is required"));
  // parameters may be left out.
  Json no_parameters = Fn("good_tool");
  no_parameters["function"].erase("parameters");
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({no_parameters}), User()})));
  // The same rules hold for global tools.
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {no_type}}})), "tools[0].type"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {no_name}}})), "tools[0].function.name"));
}

TEST(ToolRulesTest, BadToolNamesAreRejected) {
  const std::string field = "messages[0].tools[0].function.name";
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("1bad_name")}), User()}), field, "must not start with a digit"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("bad@name")}), User()}), field, "must not contain '@'"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("")}), User()}), field, "must not be empty"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn(std::string(257, 'a'))}), User()}), field, "at most 256"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("has space")}), User()}), field, "only ASCII letters"));
  Json numeric_name = Fn("x");
  numeric_name["function"]["name"] = 7;
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({numeric_name}), User()}), field, "must be a string"));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Fn(std::string(256, 'a'))}), User()})));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Fn("_private-tool_2")}), User()})));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {Fn("9lives")}}})), "tools[0].function.name"));
}

TEST(ToolRulesTest, TypeOtherThanFunctionIsRejected) {
  Json bogus = {{"type", "bogus"}, {"function", {{"name", "x"}}}};
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({bogus}), User()}), "messages[0].tools[0].type", "must be \"function\""));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("good_tool"), bogus}), User()}), "messages[0].tools[1].type"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {bogus}}})), "tools[0].type"));
}

TEST(ToolRulesTest, ToolsMustBeAnArrayOfObjects) {
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({{"type", "function"}}), User()}), "messages[0].tools",
                       "must be an array of tools"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem(Json::array({nullptr})), User()}), "messages[0].tools[0]", "not null"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem(Json::array({"get_weather"})), User()}), "messages[0].tools[0]",
                       "must be an object"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {{"type", "function"}}}})), "tools", "must be an array"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", Json::array({nullptr})}})), "tools[0]"));
  Json bad_parameters = Fn("f");
  bad_parameters["function"]["parameters"] = "object";
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {bad_parameters}}})), "tools[0].function.parameters"));
  Json bad_strict = Fn("f");
  bad_strict["function"]["strict"] = "yes";
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {bad_strict}}})), "tools[0].function.strict"));
}

TEST(ToolRulesTest, DuplicateNamesAreRejectedWithinAcrossAndBetween) {
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("dup"), Fn("dup")}), User()}),
                       "messages[0].tools[1].function.name", "already declared at messages[0].tools[0]"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("dup")}), DynamicSystem({Fn("dup")}), User()}),
                       "messages[1].tools[0].function.name", "already declared at messages[0].tools[0]"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("dup")}), User()}, {{"tools", {Fn("dup")}}}),
                       "messages[0].tools[0].function.name", "already declared at tools[0]"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {Fn("dup"), Fn("dup")}}})), "tools[1].function.name"));
}

TEST(ToolRulesTest, ShapeErrorsComeBeforeCrossMessageErrors) {
  // A duplicate (pass 2) early in the request and a malformed tool (pass 1) later: the shape
  // error is the one reported.
  Json malformed = Fn("x");
  malformed.erase("type");
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({Fn("dup")}), DynamicSystem({Fn("dup")}), User(),
                                     DynamicSystem({malformed})}),
                       "messages[3].tools[0].type"));
}

TEST(ToolRulesTest, ToolMessageNeedsToolCallId) {
  EXPECT_TRUE(Rejected(WithMessages({{{"role", "tool"}, {"content", "some tool result"}}, User()}),
                       "messages[0].tool_call_id", "is required in a tool message"));
  EXPECT_TRUE(Rejected(WithMessages({{{"role", "tool"}, {"content", "r"}, {"tool_call_id", ""}}, User()}),
                       "messages[0].tool_call_id", "must not be empty"));
  EXPECT_TRUE(Rejected(WithMessages({{{"role", "tool"}, {"content", "r"}, {"tool_call_id", 5}}, User()}),
                       "messages[0].tool_call_id"));
  EXPECT_TRUE(Accepted(WithMessages({User(), {{"role", "tool"}, {"content", "r"}, {"tool_call_id", "call_0"}}})));
}

TEST(ToolRulesTest, ToolChoiceIsAutoNoneOrRequired) {
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {Weather()}}, {"tool_choice", "bogus"}})), "tool_choice",
                       "must be \"auto\", \"none\" or \"required\""));
  Json named = Json::parse(R"({"type": "function", "function": {"name": "get_weather"}})");
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {Weather()}}, {"tool_choice", named}})), "tool_choice"));
  for (const char* choice : {"auto", "none", "required"}) {
    auto r = Chat(ChatBody({{"tools", {Weather()}}, {"tool_choice", choice}}));
    ASSERT_TRUE(Accepted(r)) << choice;
    EXPECT_EQ(r->tool_choice, choice);
  }
}

TEST(ToolRulesTest, RequiredNeedsAtLeastOneTool) {
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tool_choice", "required"}})), "tool_choice", "declares no tools"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", Json::array()}, {"tool_choice", "required"}})), "tool_choice"));
  EXPECT_TRUE(Accepted(WithMessages({DynamicSystem({Weather()}), User()}, {{"tool_choice", "required"}})));
}

TEST(ToolRulesTest, NoneAndAutoNeedNoTools) {
  for (const char* choice : {"none", "auto"}) {
    auto r = Chat(ChatBody({{"tool_choice", choice}}));
    ASSERT_TRUE(Accepted(r)) << choice;
    EXPECT_TRUE(r->tools.empty());
  }
}

TEST(ToolRulesTest, EffectiveToolChoiceDefaultsToAutoWithToolsAndNoneWithout) {
  EXPECT_EQ(Chat(ChatBody({{"tools", {Weather()}}}))->tool_choice, "auto");
  EXPECT_EQ(Chat(ChatBody())->tool_choice, "none");
  EXPECT_EQ(Chat(ChatBody({{"tools", Json::array()}}))->tool_choice, "none");
  EXPECT_EQ(WithMessages({DynamicSystem({Weather()}), User()})->tool_choice, "auto");
}

TEST(ToolRulesTest, SchemasAreNormalisedWhenStrictOrAuto) {
  Json loose = Json::parse(R"({"type": "function", "function": {"name": "f",
    "parameters": {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}}})");
  const Json strict_form = Json::parse(
      R"({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})");

  auto with_auto = Chat(ChatBody({{"tools", {loose}}, {"tool_choice", "auto"}}));
  ASSERT_TRUE(Accepted(with_auto));
  EXPECT_TRUE(with_auto->tools[0].parameters_normalised);
  EXPECT_EQ(with_auto->tools[0].parameters, strict_form);

  auto with_required = Chat(ChatBody({{"tools", {loose}}, {"tool_choice", "required"}}));
  ASSERT_TRUE(Accepted(with_required));
  EXPECT_FALSE(with_required->tools[0].parameters_normalised);
  EXPECT_EQ(with_required->tools[0].parameters, loose["function"]["parameters"]);

  Json strict = loose;
  strict["function"]["strict"] = true;
  auto strict_required = Chat(ChatBody({{"tools", {strict}}, {"tool_choice", "required"}}));
  ASSERT_TRUE(Accepted(strict_required));
  EXPECT_TRUE(strict_required->tools[0].strict);
  EXPECT_EQ(strict_required->tools[0].parameters, strict_form);

  // The declarations the prompt renders stay as the client wrote them.
  EXPECT_EQ(with_auto->body["tools"][0], loose);
}

TEST(ToolRulesTest, ToolParameterSchemasKeepTheSchemaLimits) {
  Json tool = Weather();
  tool["function"]["strict"] = true;
  tool["function"]["parameters"] = Json::parse(R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})");
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {Fn("first"), tool}}, {"tool_choice", "required"}})),
                       "tools[1].function.parameters", "refers to itself"));
  // Whatever tool_choice says: the schema still reaches a backend and the prompt.
  tool["function"]["strict"] = false;
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", {tool}}})), "tools[0].function.parameters", "refers to itself"));
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem({tool}), User()}, {{"tool_choice", "required"}}),
                       "messages[0].tools[0].function.parameters", "refers to itself"));
}

TEST(ToolRulesTest, AtMost128ToolsInAll) {
  Json tools = Json::array();
  for (int i = 0; i < 128; ++i) tools.push_back(Fn("t" + std::to_string(i)));
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"tools", tools}}))));
  Json more = Json::array({Fn("extra")});
  EXPECT_TRUE(Rejected(WithMessages({DynamicSystem(more), User()}, {{"tools", tools}}), "messages[0].tools[0]",
                       "at most 128 tools"));
  tools.push_back(Fn("t128"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"tools", tools}})), "tools[128]", "at most 128 tools"));
}

}  // namespace
}  // namespace kimi::api::request
