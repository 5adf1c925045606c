#include "api/model_rules_table.h"

#include <gtest/gtest.h>

#include "api/request_gate.h"

namespace kimi::api {
namespace {

using Json = nlohmann::ordered_json;

TEST(ModelRulesTableTest, AModelWithoutAnEntryGetsK3) {
  ModelRulesTable table;
  ASSERT_TRUE(table.Add("other", nlohmann::json{{"top_p", nullptr}}).ok());
  EXPECT_EQ(table.For("kimi-k3"), ModelRequestRules::K3());
  EXPECT_EQ(table.For(""), ModelRequestRules::K3());
}

TEST(ModelRulesTableTest, AnEntryAppliesToItsModelOnly) {
  ModelRulesTable table;
  ASSERT_TRUE(table.Add("open-model", nlohmann::json{{"temperature", {0, 2}}, {"top_p", nullptr}, {"n", nullptr}}).ok());
  const ModelRequestRules& rules = table.For("open-model");
  EXPECT_EQ(rules.temperature_max, 2.0);
  EXPECT_FALSE(rules.top_p.has_value());
  EXPECT_FALSE(rules.n.has_value());
  EXPECT_EQ(rules.presence_penalty, 0.0);  // absent: K3's pin stays
}

TEST(ModelRulesTableTest, BadRulesAndDuplicatesAreRefused) {
  ModelRulesTable table;
  EXPECT_EQ(table.Add("m", nlohmann::json{{"top_k", 3}}).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(table.Add("m", nlohmann::json::object()).ok());
  EXPECT_EQ(table.Add("m", nlohmann::json::object()).code(), Status::Code::kInvalidArgument);
}

TEST(ModelRulesTableTest, TheGateAppliesTheRulesItIsGiven) {
  ModelRulesTable table;
  ASSERT_TRUE(table.Add("open-model", nlohmann::json{{"temperature", {0, 2}}, {"top_p", nullptr}}).ok());
  auto body = [] {
    return Json::parse(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 1.5, "top_p": 0.5})");
  };
  Status k3 = ParseRequest(Endpoint::kChatCompletions, body(), table.For("kimi-k3")).status();
  EXPECT_EQ(k3.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(k3.message().find("temperature"), std::string::npos) << k3.ToString();
  Status open = ParseRequest(Endpoint::kChatCompletions, body(), table.For("open-model")).status();
  EXPECT_TRUE(open.ok()) << open.ToString();
}

}  // namespace
}  // namespace kimi::api
