#include "upstream/upstream_request.h"

#include <gtest/gtest.h>

namespace kimi::upstream {
namespace {

using Json = nlohmann::ordered_json;

Json Base() { return Json{{"model", "kimi-k3"}, {"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})}}; }

TEST(UpstreamChatBody, ThinkingObjectBecomesTemplateKwargs) {
  Json body = Base();
  body["thinking"] = {{"type", "disabled"}, {"effort", "low"}, {"keep", "all"}};
  body["reasoning_effort"] = "high";  // loses to thinking.effort
  body["stream"] = false;
  body["max_tokens"] = 7;
  Result<Json> out = UpstreamChatBody(body, "");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)["chat_template_kwargs"],
            (Json{{"thinking", false}, {"thinking_effort", "low"}, {"preserve_thinking", true}}));
  EXPECT_FALSE(out->contains("thinking"));
  EXPECT_FALSE(out->contains("reasoning_effort"));
  EXPECT_EQ((*out)["stream"], true);
  EXPECT_EQ((*out)["stream_options"]["include_usage"], true);
  EXPECT_EQ((*out)["max_tokens"], 7);
  EXPECT_EQ((*out)["model"], "kimi-k3");
  EXPECT_EQ((*out)["messages"], body["messages"]);
}

TEST(UpstreamChatBody, DefaultsAndClientKwargsAreKept) {
  Json body = Base();
  body["chat_template_kwargs"] = {{"thinking", false}, {"custom", 1}};
  body["reasoning_effort"] = "medium";
  Result<Json> out = UpstreamChatBody(body, "served-name");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)["chat_template_kwargs"],
            (Json{{"thinking", false}, {"custom", 1}, {"thinking_effort", "medium"}, {"preserve_thinking", true}}));
  EXPECT_EQ((*out)["model"], "served-name");

  Result<Json> plain = UpstreamChatBody(Base(), "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)["chat_template_kwargs"],
            (Json{{"thinking", true}, {"thinking_effort", "max"}, {"preserve_thinking", true}}));
}

TEST(UpstreamCompletionBody, StreamsWithUsageAndNoTemplateKwargs) {
  Json body = {{"model", "kimi-k3"}, {"prompt", "Once"}, {"stream_options", {{"include_usage", false}}}};
  Result<Json> out = UpstreamCompletionBody(body, "k3");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)["stream"], true);
  EXPECT_EQ((*out)["stream_options"]["include_usage"], true);
  EXPECT_EQ((*out)["model"], "k3");
  EXPECT_EQ((*out)["prompt"], "Once");
  EXPECT_FALSE(out->contains("chat_template_kwargs"));
}

TEST(UpstreamChatBody, RejectsWhatTheEngineWouldReject) {
  EXPECT_FALSE(UpstreamChatBody(Json::array(), "").ok());
  Json body = Base();
  body["chat_template_kwargs"] = "thinking";
  EXPECT_EQ(UpstreamChatBody(body, "").status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace kimi::upstream
