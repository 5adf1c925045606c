#include "config/model_request_rules.h"

#include <gtest/gtest.h>

namespace kimi::api {
namespace {

using nlohmann::json;

TEST(ModelRequestRulesTest, K3IsTheVerifiersBounds) {
  ModelRequestRules k3 = ModelRequestRules::K3();
  EXPECT_EQ(k3.temperature_min, 0.0);
  EXPECT_EQ(k3.temperature_max, 1.0);
  EXPECT_EQ(k3.top_p, 0.95);
  EXPECT_EQ(k3.presence_penalty, 0.0);
  EXPECT_EQ(k3.frequency_penalty, 0.0);
  EXPECT_EQ(k3.n, 1);
}

TEST(ModelRequestRulesTest, EmptyConfigIsK3) {
  auto rules = ModelRequestRules::FromJson(json::object());
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(*rules, ModelRequestRules::K3());
}

TEST(ModelRequestRulesTest, ConfigOverridesAndNullRemovesAPin) {
  auto rules = ModelRequestRules::FromJson(json::parse(R"({"temperature": [0, 2], "top_p": null, "n": 4,
                                                           "presence_penalty": 0.5})"));
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  EXPECT_EQ(rules->temperature_max, 2.0);
  EXPECT_EQ(rules->top_p, std::nullopt);
  EXPECT_EQ(rules->n, 4);
  EXPECT_EQ(rules->presence_penalty, 0.5);
  EXPECT_EQ(rules->frequency_penalty, 0.0);
}

TEST(ModelRequestRulesTest, RoundTripsThroughJson) {
  ModelRequestRules custom;
  custom.temperature_max = 1.5;
  custom.top_p.reset();
  custom.max_stop = 8;
  custom.vocab_size = 4352;
  auto back = ModelRequestRules::FromJson(custom.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, custom);
  EXPECT_EQ(ModelRequestRules::K3().ToJson(),
            json::parse(R"({"temperature": [0.0, 1.0], "top_p": 0.95, "presence_penalty": 0.0,
                            "frequency_penalty": 0.0, "n": 1, "max_stop": 4, "max_stop_bytes": 256,
                            "vocab_size": 163840})"));
}

TEST(ModelRequestRulesTest, BadConfigIsRefusedNamingTheKey) {
  auto expect_error = [](const char* text, const char* fragment) {
    auto rules = ModelRequestRules::FromJson(json::parse(text));
    ASSERT_FALSE(rules.ok()) << text;
    EXPECT_NE(rules.status().message().find(fragment), std::string::npos) << rules.status().message();
  };
  expect_error(R"({"temprature": [0, 1]})", "request_rules.temprature is not a known rule");
  expect_error(R"({"temperature": 1})", "request_rules.temperature must be [min, max]");
  expect_error(R"({"temperature": [1, 0]})", "request_rules.temperature must be a range");
  expect_error(R"({"temperature": [0, 3]})", "request_rules.temperature");
  expect_error(R"({"top_p": 1.5})", "request_rules.top_p must be in [0, 1]");
  expect_error(R"({"top_p": "0.95"})", "request_rules.top_p must be a number or null");
  expect_error(R"({"frequency_penalty": -3})", "request_rules.frequency_penalty must be in [-2, 2]");
  expect_error(R"({"n": 0})", "request_rules.n must be an integer in [1, 128] or null");
  expect_error(R"({"n": 129})", "request_rules.n must be an integer in [1, 128] or null");
  // The stop bounds a model may set stay within what the engine's scheduler accepts.
  expect_error(R"({"max_stop": 17})", "request_rules.max_stop must be an integer in [1, 16]");
  expect_error(R"({"max_stop": 0})", "request_rules.max_stop must be an integer in [1, 16]");
  expect_error(R"({"max_stop_bytes": 100000})", "request_rules.max_stop_bytes must be an integer in [1, 1024]");
  expect_error(R"({"vocab_size": -1})", "request_rules.vocab_size");
  expect_error(R"([])", "request_rules must be an object");
}

}  // namespace
}  // namespace kimi::api
