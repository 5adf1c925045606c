#include "config/router_config.h"

#include <gtest/gtest.h>

namespace kimi::router {
namespace {

Result<RouterConfig> Parse(const std::string& text) {
  RouterConfig config;
  KIMI_RETURN_IF_ERROR(RouterConfigSchema().Bind(nlohmann::json::parse(text), "$.router", &config));
  KIMI_RETURN_IF_ERROR(CheckRouterConfig(config));
  return config;
}

TEST(RouterConfig, BindsBackendsWithDefaults) {
  Result<RouterConfig> c = Parse(R"({"backends": [
      {"name": "local", "kind": "embedded", "request_timeout_ms": 5000},
      {"name": "vllm-a", "url": "http://10.0.0.5:8000/", "models": ["kimi-k3"], "upstream_model": "k3"}],
      "breaker_failures": 5})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->backends.size(), 2u);
  EXPECT_EQ(c->backends[0].kind, "embedded");
  EXPECT_EQ(c->backends[0].request_timeout_ms, 5000);
  EXPECT_EQ(c->backends[1].kind, "upstream");
  EXPECT_EQ(c->backends[1].models, std::vector<std::string>{"kimi-k3"});
  EXPECT_EQ(c->backends[1].timeout_ms, 60'000);
  EXPECT_EQ(c->backends[1].keep_alive_ms, 4'000);
  EXPECT_EQ(c->breaker_failures, 5);
  EXPECT_EQ(c->max_attempts, 2);
}

TEST(RouterConfig, RejectsWithThePath) {
  auto message = [](const std::string& text) { return Parse(text).status().message(); };
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "https://h:1"}]})"),
            "$.router.backends[0].url: \"https://h:1\" must start with http:// (this build has no TLS client)");
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "http://h:1/v1"}]})"),
            "$.router.backends[0].url: \"http://h:1/v1\" must be http://host:port, no path");
  EXPECT_EQ(message(R"({"backends": [{"name": "a"}]})"), "$.router.backends[0].url: required for an upstream backend");
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "http://h:1", "model": ["x"]}]})"),
            "$.router.backends[0].model: unknown key (did you mean \"models\"?)");
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "http://h:1", "models": [1]}]})"),
            "$.router.backends[0].models[0]: expected a string, got an integer");
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "http://h:1"}, {"name": "a", "url": "http://h:2"}]})"),
            "$.router.backends[1].name: \"a\" names two backends");
  EXPECT_EQ(message(R"({"backends": [{"name": "e", "kind": "embedded", "models": ["m"]}]})"),
            "$.router.backends[0]: an embedded backend takes no url, models or upstream_model (it serves the model it "
            "loaded)");
  EXPECT_EQ(message(R"({"backends": [{"name": "a b", "url": "http://h:1"}]})"),
            "$.router.backends[0].name: \"a b\" may use only A-Z a-z 0-9 . _ -");
  EXPECT_EQ(message(R"({"backends": {}})"), "$.router.backends: expected an array, got an object");
  EXPECT_EQ(message(R"({"max_attempts": 0})"), "$.router.max_attempts: 0 is out of range [1, 16]");
  EXPECT_EQ(message(R"({"backends": [{"name": "a", "url": "http://h:1", "keep_alive_ms": -1}]})"),
            "$.router.backends[0].keep_alive_ms: -1 is out of range [0, 3600000]");
}

TEST(RouterConfig, DescribeListsElementKeys) {
  std::vector<config::KeyDoc> keys;
  RouterConfigSchema().Describe("$.router", RouterConfig{}, &keys);
  bool has_element_key = false;
  for (const auto& k : keys) has_element_key |= k.path == "$.router.backends[].timeout_ms";
  EXPECT_TRUE(has_element_key);
  EXPECT_EQ(keys.front().path, "$.router.backends");
  EXPECT_EQ(keys.front().default_value, nlohmann::json::array());
}

}  // namespace
}  // namespace kimi::router
