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

// The template's kwargs are the three thinking settings alone: a caller's others (tools,
// add_generation_prompt, any variable of vLLM's template) passed no policy and reach no
// upstream, nor do fields the appliance does not know (vLLM acts on chat_template, priority,
// kv_transfer_params, ...), nor a null cap that would drop the policy's.
TEST(UpstreamBody, OnlyKnownFieldsAndTheThinkingKwargsAreSent) {
  Json body = Base();
  body["chat_template_kwargs"] = {{"thinking", false},
                                  {"custom", 1},
                                  {"tools", Json::array({Json{{"type", "function"}}})},
                                  {"add_generation_prompt", false}};
  body["reasoning_effort"] = "medium";
  // (Options that would change the answer, chat_template or guided_json, are refused by the
  // request rules: api/request/unapplied_options.h.)
  for (const char* unknown : {"kv_transfer_params", "vllm_xargs", "frobnicate", "user"}) body[unknown] = "x";
  body["priority"] = -100;
  body["metadata"] = {{"k", "4111 1111 1111 1111"}};
  body["messages"][0]["refusal"] = "card 4111 1111 1111 1111";
  // (A part without text, such as a `refusal` part, is refused by the request rules.)
  body["messages"][0]["content"] = Json::array({Json{{"type", "text"}, {"text", "hi"}, {"extra", "x"}},
                                                Json{{"type", "input_text"}, {"text", "shown"}}});
  body["max_tokens"] = nullptr;
  const Json out = UpstreamBody(Forwarded(body), "served-name");
  EXPECT_EQ(out["chat_template_kwargs"],
            (Json{{"thinking", false}, {"thinking_effort", "medium"}, {"preserve_thinking", true}}));
  for (const char* unknown : {"priority", "kv_transfer_params", "vllm_xargs", "frobnicate", "metadata", "user",
                              "max_tokens", "reasoning_effort"}) {
    EXPECT_FALSE(out.contains(unknown)) << unknown;
  }
  // The message as the prompt prints it: no unknown key, the parts as text parts of their text.
  EXPECT_EQ(out["messages"][0], (Json{{"role", "user"},
                                      {"content", Json::array({Json{{"type", "text"}, {"text", "hi"}},
                                                               Json{{"type", "text"}, {"text", "shown"}}})}}));
  EXPECT_EQ(out["model"], "served-name");

  const Json plain = UpstreamBody(Forwarded(Base()), "");
  EXPECT_EQ(plain["chat_template_kwargs"],
            (Json{{"thinking", true}, {"thinking_effort", "max"}, {"preserve_thinking", true}}));
}

// An image part reaches the upstream as its URL (and a known detail) alone, whichever of the two
// part types carried it: other keys would be text the policy never read.
TEST(UpstreamBody, ImagePartsAreTheirUrlAlone) {
  Json body = Base();
  const std::string url = "data:image/png;base64,AAAA";
  body["messages"][0]["content"] = Json::array(
      {Json{{"type", "image_url"}, {"image_url", {{"url", url}, {"detail", "low"}, {"note", "card 4111"}}}},
       Json{{"type", "image"}, {"image", {{"url", url}, {"x-secret", "ssn 123-45-6789"}}}},
       Json{{"type", "image"}, {"image", url}},
       Json{{"type", "image_url"}, {"image_url", {{"url", url}, {"detail", "ssn 123-45-6789"}}}}});
  const Json out = UpstreamBody(Forwarded(body), "");
  const Json image = {{"type", "image_url"}, {"image_url", {{"url", url}}}};
  const Json low = {{"type", "image_url"}, {"image_url", {{"url", url}, {"detail", "low"}}}};
  EXPECT_EQ(out["messages"][0]["content"], Json::array({low, image, image, image}));
}

TEST(UpstreamBody, CompletionsStreamWithUsageAndNoTemplateKwargs) {
  const Json body = {{"model", "kimi-k3"}, {"prompt", "Once"}, {"stream", true},
                     {"stream_options", {{"include_usage", false}}}, {"suffix", "card 4111 1111 1111 1111"}};
  const Json out = UpstreamBody(Forwarded(body, api::Endpoint::kCompletions), "k3");
  EXPECT_FALSE(out.contains("suffix"));  // text the prompt does not print and the policy does not read
  EXPECT_EQ(out["stream"], true);
  EXPECT_EQ(out["stream_options"]["include_usage"], true);
  EXPECT_EQ(out["model"], "k3");
  EXPECT_EQ(out["prompt"], "Once");
  EXPECT_FALSE(out.contains("chat_template_kwargs"));
}

}  // namespace
}  // namespace kimi::upstream
