// The whole validator: the normalised body, agreement with the chat format's reader, the
// completions endpoint, and what the HTTP layer gets from an error.
#include "api/request/request_validator.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"
#include "kimi/chat_format.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::Chat;
using testing::ChatBody;
using testing::ChatWith;
using testing::Json;
using testing::Rejected;

TEST(RequestValidatorTest, TheVerifiersPlainRequestPassesInEveryThinkingMode) {
  for (const char* fields : {"{}", R"({"thinking": {"type": "enabled"}})", R"({"thinking": {"type": "disabled"}})",
                             R"({"chat_template_kwargs": {"thinking": true}})",
                             R"({"chat_template_kwargs": {"thinking": false}})"}) {
    EXPECT_TRUE(Accepted(ChatWith(fields))) << fields;
  }
}

// A developer message is checked as, and becomes, a system message (WriteSystemRoles): its
// dynamic tools are declared like a system message's, and the normalised body says `system`.
TEST(RequestValidatorTest, DeveloperMessagesBecomeSystemMessages) {
  auto validated = Chat(Json::parse(R"({"model": "kimi-k3", "messages": [
      {"role": "developer", "content": "You are a support bot."},
      {"role": "developer", "content": "", "tools": [{"type": "function", "function": {"name": "lookup"}}]},
      {"role": "user", "content": "hi"}]})"));
  ASSERT_TRUE(Accepted(validated));
  EXPECT_EQ(validated->body["messages"][0], Json::parse(R"({"role": "system", "content": "You are a support bot."})"));
  EXPECT_EQ(validated->body["messages"][1]["role"], "system");
  ASSERT_EQ(validated->tools.size(), 1u);
  EXPECT_TRUE(validated->tools[0].dynamic);
  // What a system message may not carry, a developer message may not either.
  EXPECT_TRUE(Rejected(Chat(Json::parse(R"({"model": "kimi-k3", "messages": [
      {"role": "developer", "content": "text", "tools": [{"type": "function", "function": {"name": "lookup"}}]},
      {"role": "user", "content": "hi"}]})")), "messages[0].content"));
}

// The chat format reads the normalised body exactly as the validator resolved it.
TEST(RequestValidatorTest, ChatFormatReadsTheResolvedThinkingControls) {
  for (const char* fields : {
           "{}",
           R"({"thinking": {"type": "disabled"}})",
           R"({"thinking": {"type": "enabled", "keep": "all", "effort": "low"}, "reasoning_effort": "max"})",
           R"({"reasoning_effort": "high"})",
           R"({"thinking": false, "thinking_effort": "medium"})",
           R"({"chat_template_kwargs": {"thinking": false, "thinking_effort": null}, "thinking": {"type": "enabled"}})",
           R"({"chat_template_kwargs": {"preserve_thinking": false}})",
       }) {
    auto validated = ChatWith(fields);
    ASSERT_TRUE(Accepted(validated)) << fields;
    auto parsed = ParseChatRequest(validated->body);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->thinking, validated->thinking) << fields;
    EXPECT_EQ(parsed->preserve_thinking, validated->preserve_thinking) << fields;
    if (validated->thinking_effort) {
      EXPECT_EQ(parsed->thinking_effort, *validated->thinking_effort) << fields;
    } else {
      EXPECT_TRUE(parsed->thinking_effort.is_null()) << fields;
    }
    EXPECT_TRUE(ChatFormat::Render(validated->body).ok()) << fields;
  }
}

// Normalising never changes the prompt of a request the chat format already read fully (so
// usage.prompt_tokens is what Moonshot counts); thinking.effort, which only the rules read,
// now reaches the prompt.
TEST(RequestValidatorTest, NormalisingKeepsThePrompt) {
  const char* tools = R"([{"type": "function", "function": {"name": "get_weather", "parameters":
                          {"type": "object", "properties": {"city": {"type": "string"}}}}}])";
  for (std::string fields : {
           std::string("{}"),
           std::string(R"({"thinking": {"type": "disabled"}})"),
           std::string(R"({"thinking": {"type": "enabled", "keep": "all"}, "reasoning_effort": "low"})"),
           std::string(R"({"chat_template_kwargs": {"thinking": false}, "temperature": 0.6, "top_p": 0.95})"),
           R"({"tool_choice": "auto", "tools": )" + std::string(tools) + "}",
           R"({"tool_choice": "required", "thinking": {"type": "disabled"}, "tools": )" + std::string(tools) + "}",
           std::string(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "capital_answer",
               "schema": {"type": "object", "properties": {"capital": {"type": "string"}}}}}})"),
       }) {
    Json body = ChatBody(Json::parse(fields));
    body["messages"].push_back({{"role", "system"}, {"content", ""}, {"tools", Json::parse(
        R"([{"type": "function", "function": {"name": "get_time"}}])")}});
    auto validated = Chat(body);
    ASSERT_TRUE(Accepted(validated)) << fields;
    auto before = ChatFormat::Render(body);
    auto after = ChatFormat::Render(validated->body);
    ASSERT_TRUE(before.ok() && after.ok()) << fields;
    EXPECT_EQ(after->text, before->text) << fields;
  }
  auto effort = ChatWith(R"({"thinking": {"type": "enabled", "keep": "all", "effort": "low"}})");
  ASSERT_TRUE(Accepted(effort));
  auto prompt = ChatFormat::Render(effort->body);
  ASSERT_TRUE(prompt.ok());
  EXPECT_NE(prompt->text.find("thinking_effort=low"), std::string::npos);
}

TEST(RequestValidatorTest, OtherFieldsAreKeptAsSent) {
  Json fields = Json::parse(R"({"temperature": 0.6, "stream": true, "stream_options": {"include_usage": true},
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}],
    "tool_choice": "auto", "response_format": {"type": "json_object"}, "max_tokens": 9, "user": "u"})");
  Json body = ChatBody(fields);
  auto r = Chat(body);
  ASSERT_TRUE(Accepted(r));
  for (const auto& [key, value] : body.items()) EXPECT_EQ(r->body[key], value) << key;
  EXPECT_EQ(r->endpoint, Endpoint::kChatCompletions);
  EXPECT_TRUE(r->ignored_fields.empty());
}

// top_k is a field the API accepts (the engine applies it), not an ignored one.
TEST(RequestValidatorTest, UnknownFieldsAreListedForTheLog) {
  auto r = ChatWith(R"({"top_k": 5, "frobnicate": true, "seed": 1, "best": 2})");
  ASSERT_TRUE(Accepted(r));
  EXPECT_EQ(r->ignored_fields, (std::vector<std::string>{"frobnicate", "best"}));
}

TEST(RequestValidatorTest, PassiveFieldsAreTypeChecked) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"logprobs": 1})"), "logprobs"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"top_logprobs": 21})"), "top_logprobs"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": []})"), "logit_bias"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"user": 1})"), "user"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"parallel_tool_calls": "yes"})"), "parallel_tool_calls"));
  EXPECT_TRUE(Accepted(ChatWith(R"({"logprobs": true, "top_logprobs": 0, "logit_bias": {}, "parallel_tool_calls": true})")));
  // top_logprobs asks for alternatives of the logprobs asked for (OpenAI's rule too).
  EXPECT_TRUE(Rejected(ChatWith(R"({"logprobs": false, "top_logprobs": 0})"), "top_logprobs"));
}

TEST(RequestValidatorTest, LogitBiasNamesTokensOfTheVocabularyWithBoundedValues) {
  EXPECT_TRUE(Accepted(ChatWith(R"({"logit_bias": {"0": -100, "163839": 100, "42": 5.5}})")));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"163840": 1}})"), "logit_bias", "token ids in [0, 163840)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"-1": 1}})"), "logit_bias", "token ids"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"a b": 1}})"), "logit_bias", "token ids"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"99999999999999999999": 1}})"), "logit_bias", "token ids"));
  // One token, one bias: an id is written as it is, so "05" cannot name token 5 a second time.
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"5": 100, "05": -100}})"), "logit_bias", "token ids"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"5": 101}})"), "logit_bias.5", "must be in [-100, 100] (got 101)"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"5": -100.5}})"), "logit_bias.5"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"logit_bias": {"5": "1"}})"), "logit_bias.5", "must be a number"));
  ModelRequestRules small;
  small.vocab_size = 4352;
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"logit_bias", {{"4352", 1}}}}), small), "logit_bias", "[0, 4352)"));
  Json many = Json::object();
  for (int i = 0; i < 301; ++i) many[std::to_string(i)] = 1;
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"logit_bias", many}})), "logit_bias", "at most 300 entries (got 301)"));
  // Completions share the rule.
  EXPECT_TRUE(Rejected(ValidateCompletion(Json{{"model", "kimi-k3"}, {"prompt", "x"}, {"logit_bias", {{"5", 200}}}},
                                          ModelRequestRules::K3()),
                       "logit_bias.5"));
}

TEST(RequestValidatorTest, MetadataHasOpenAIsBounds) {
  Json sixteen = Json::object();
  for (int i = 0; i < 16; ++i) sixteen["k" + std::to_string(i)] = std::string(512, 'v');
  EXPECT_TRUE(Accepted(Chat(ChatBody({{"metadata", sixteen}}))));
  Json seventeen = sixteen;
  seventeen["k16"] = "v";
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"metadata", seventeen}})), "metadata", "at most 16 pairs"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"metadata", {{std::string(65, 'k'), "v"}}}})), "metadata", "keys must be at most 64"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"metadata", {{"k", std::string(513, 'v')}}}})), "metadata", "at most 512"));
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"metadata", {{"k", 1}}}})), "metadata", "must be strings"));
}

TEST(RequestValidatorTest, BodyMustBeAnObjectOfBoundedDepth) {
  EXPECT_TRUE(Rejected(Chat(Json::array()), "body", "must be a JSON object"));
  Json deep = "x";
  for (int i = 0; i < 300; ++i) deep = Json::array({deep});
  EXPECT_TRUE(Rejected(Chat(ChatBody({{"metadata", deep}})), "metadata", "nested deeper than"));
}

TEST(RequestValidatorTest, ErrorsCarryTheParamForTheHttpLayer) {
  auto r = ChatWith(R"({"temperature": 1.1})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(RequestErrorParam(r.status()), "temperature");
  EXPECT_EQ(r.status().message(), "temperature must be in [0, 1] (got 1.1)");
  EXPECT_EQ(RequestErrorParam(ChatWith(R"({"tools": [null]})").status()), "tools[0]");
  EXPECT_EQ(RequestErrorParam(ChatWith(R"({"thinking": {"keep": "none"}})").status()), "thinking.keep");
  EXPECT_EQ(RequestErrorParam(Chat(Json::array()).status()), std::nullopt);  // "body" is no field
  EXPECT_EQ(RequestErrorParam(Status::InvalidArgument("the request body is not valid JSON")), std::nullopt);
  EXPECT_EQ(RequestErrorParam(Status::NotFound("model x does not exist")), std::nullopt);
}

TEST(RequestValidatorTest, CompletionsShareTheSamplingRules) {
  auto ok = ValidateCompletion(Json::parse(R"({"model": "kimi-k3", "prompt": "Once", "max_tokens": 4, "temperature": 0.6,
                                               "stream": true, "stream_options": {"include_usage": true}, "stop": "\n"})"),
                               ModelRequestRules::K3());
  ASSERT_TRUE(Accepted(ok));
  EXPECT_EQ(ok->endpoint, Endpoint::kCompletions);
  EXPECT_EQ(ok->prompt, "Once");
  EXPECT_EQ(ok->generation.max_tokens, 4);
  EXPECT_TRUE(ok->include_usage);
  auto completion = [](const char* text) { return ValidateCompletion(Json::parse(text), ModelRequestRules::K3()); };
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "temperature": 2.0})"), "temperature"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "top_p": 0.8})"), "top_p"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "n": 2})"), "n"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m"})"), "prompt", "is required"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": 3})"), "prompt"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": ["a", "b"]})"), "prompt", "exactly one"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": [3]})"), "prompt[0]"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "best_of": 2})"), "best_of"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "echo": "no"})"), "echo"));
  EXPECT_TRUE(Rejected(completion(R"({"model": "m", "prompt": "x", "logprobs": 6})"), "logprobs"));
  auto single = completion(R"({"model": "m", "prompt": ["only"], "messages": []})");
  ASSERT_TRUE(Accepted(single));
  EXPECT_EQ(single->body["prompt"], "only");
  EXPECT_EQ(single->ignored_fields, std::vector<std::string>{"messages"});
}

}  // namespace
}  // namespace kimi::api::request
