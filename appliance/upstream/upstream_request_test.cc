#include "upstream/upstream_request.h"

#include <gtest/gtest.h>

#include "api/forward_body.h"
#include "api/request_gate.h"

namespace kimi::upstream {
namespace {

using Json = nlohmann::ordered_json;

Json Forwarded(const Json& body, api::Endpoint endpoint = api::Endpoint::kChatCompletions) {
  Result<api::ApiRequest> parsed = api::ParseRequest(endpoint, body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return api::ForwardBody(api::ToBackendRequest(std::move(parsed).value(), "req-1", "kimi-k3"));
}

Json Base() { return Json{{"model", "kimi-k3"}, {"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})}}; }

TEST(UpstreamBody, ThinkingObjectBecomesTemplateKwargs) {
  Json body = Base();
  body["thinking"] = {{"type", "disabled"}, {"effort", "low"}, {"keep", "all"}};
  body["reasoning_effort"] = "high";  // loses to thinking.effort
  body["stream"] = false;
  body["max_tokens"] = 7;
  const Json out = UpstreamBody(Forwarded(body), "");
  EXPECT_EQ(out["chat_template_kwargs"],
            (Json{{"thinking", false}, {"thinking_effort", "low"}, {"preserve_thinking", true}}));
  EXPECT_FALSE(out.contains("thinking"));
  EXPECT_FALSE(out.contains("reasoning_effort"));
  EXPECT_EQ(out["stream"], true);
  EXPECT_EQ(out["stream_options"]["include_usage"], true);
  EXPECT_EQ(out["max_tokens"], 7);
  EXPECT_EQ(out["model"], "kimi-k3");
  EXPECT_EQ(out["messages"], body["messages"]);
}

TEST(UpstreamBody, DefaultsAndClientKwargsAreKept) {
  Json body = Base();
  body["chat_template_kwargs"] = {{"thinking", false}, {"custom", 1}};
  body["reasoning_effort"] = "medium";
  const Json out = UpstreamBody(Forwarded(body), "served-name");
  EXPECT_EQ(out["chat_template_kwargs"],
            (Json{{"thinking", false}, {"custom", 1}, {"thinking_effort", "medium"}, {"preserve_thinking", true}}));
  EXPECT_EQ(out["model"], "served-name");

  const Json plain = UpstreamBody(Forwarded(Base()), "");
  EXPECT_EQ(plain["chat_template_kwargs"],
            (Json{{"thinking", true}, {"thinking_effort", "max"}, {"preserve_thinking", true}}));
}

TEST(UpstreamBody, CompletionsStreamWithUsageAndNoTemplateKwargs) {
  const Json body = {{"model", "kimi-k3"}, {"prompt", "Once"}, {"stream", true},
                     {"stream_options", {{"include_usage", false}}}};
  const Json out = UpstreamBody(Forwarded(body, api::Endpoint::kCompletions), "k3");
  EXPECT_EQ(out["stream"], true);
  EXPECT_EQ(out["stream_options"]["include_usage"], true);
  EXPECT_EQ(out["model"], "k3");
  EXPECT_EQ(out["prompt"], "Once");
  EXPECT_FALSE(out.contains("chat_template_kwargs"));
}

}  // namespace
}  // namespace kimi::upstream
