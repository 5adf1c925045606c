// The decision step without the server: access rules, limits, redaction before the model,
// block naming the category.
#include "policy/policy_decision.h"

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"

namespace kimi::policy {
namespace {

using Json = nlohmann::ordered_json;
using testing::LoadShipped;

const auth::ServerSecret& Secret() {
  static const auth::ServerSecret secret = auth::ServerSecret::FromBytes({7});
  return secret;
}

std::shared_ptr<ActivePolicy> Active(const nlohmann::json& document) {
  auto active = std::make_shared<ActivePolicy>();
  active->version = 3;
  Result<Policy> parsed = ParsePolicy(document);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  active->policy = *parsed;
  auto redactor = Redactor::Create(active->policy.redaction, &Secret());
  EXPECT_TRUE(redactor.ok());
  active->redactor = std::move(redactor).value();
  return active;
}

Json Chat(const std::string& text) {
  return Json{{"model", "kimi-k3"},
              {"messages", Json::array({Json{{"role", "user"}, {"content", text}}})},
              {"chat_template_kwargs", Json{{"thinking", true}, {"thinking_effort", "max"}}}};
}

TEST(PolicyDecisionTest, DefaultAllowsAndLeavesThePromptAlone) {
  auto active = Active(LoadShipped("default.json"));
  Json body = Chat("card 4111 1111 1111 1111, mail a@b.io");
  const Json sent = body;
  PolicyDecision d = DecideRequest(*active, {"user", "key_1", "kimi-k3", true}, &body);
  EXPECT_TRUE(d.allowed());
  EXPECT_EQ(body, sent);
  EXPECT_TRUE(d.redactions.empty());
  EXPECT_EQ(d.policy_version, 3);
}

TEST(PolicyDecisionTest, BlockNamesTheCategoryNotTheValue) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("Thẻ của tôi là 4111 1111 1111 1111");
  PolicyDecision d = DecideRequest(*active, {"admin", "key_1", "kimi-k3", true}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(d.reason.message().find("payment_card"), std::string::npos);
  EXPECT_EQ(d.reason.message().find("4111"), std::string::npos);
  EXPECT_EQ(DecisionAuditEntries(d), std::vector<std::string>{"redact:payment_card:block:1"});
}

TEST(PolicyDecisionTest, NearMissIsNotBlocked) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("order number 4111 1111 1111 1112");
  EXPECT_TRUE(DecideRequest(*active, {"admin", "", "kimi-k3", true}, &body).allowed());
}

TEST(PolicyDecisionTest, RedactsBeforeTheModelAndReportsCounts) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("IBAN GB82WEST12345698765432, mail a@b.io and c@d.org");
  body["messages"].push_back(Json{{"role", "user"}, {"content", Json::array({Json{{"type", "text"}, {"text", "x@y.com"}}})}});
  PolicyDecision d = DecideRequest(*active, {"admin", "", "kimi-k3", true}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  const std::string first = body["messages"][0]["content"];
  EXPECT_EQ(first.find("GB82"), std::string::npos);
  EXPECT_NE(first.find("[HASH:IBAN:"), std::string::npos);
  EXPECT_NE(first.find("[REDACTED:EMAIL]"), std::string::npos);
  EXPECT_EQ(body["messages"][1]["content"][0]["text"], "[REDACTED:EMAIL]");
  EXPECT_EQ(d.redactions, (std::vector<RedactionDecision>{{"iban", Action::kHash, 1}, {"email", Action::kMask, 3}}));
}

TEST(PolicyDecisionTest, CompletionsPromptIsRedacted) {
  auto active = Active(LoadShipped("examples/hospital.json"));
  Json body{{"model", "kimi-k3"}, {"prompt", Json::array({"Patient MRN-0012345", "DOB: 1985-03-14"})}};
  PolicyDecision d = DecideRequest(*active, {"admin", "", "kimi-k3", false}, &body);
  ASSERT_TRUE(d.allowed());
  EXPECT_EQ(body["prompt"][0], "Patient [REDACTED:MEDICAL_RECORD]");
  EXPECT_EQ(body["prompt"][1], "DOB: [REDACTED:DATE_OF_BIRTH]");
}

TEST(PolicyDecisionTest, AccessRules) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json other_model = Chat("hello");
  other_model["model"] = "other";
  PolicyDecision d = DecideRequest(*active, {"user", "key_1", "other", true}, &other_model);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kPermissionDenied);

  Json no_rule = Chat("hello");
  EXPECT_EQ(DecideRequest(*active, {"auditor", "", "kimi-k3", true}, &no_rule).reason.code(),
            Status::Code::kPermissionDenied);

  Json tools = Chat("hello");
  tools["tools"] = Json::array({Json{{"type", "function"}, {"function", Json{{"name", "f"}}}}});
  EXPECT_EQ(DecideRequest(*active, {"user", "", "kimi-k3", true}, &tools).reason.code(), Status::Code::kPermissionDenied);

  Json too_long = Chat("hello");
  too_long["max_tokens"] = 4096;
  EXPECT_EQ(DecideRequest(*active, {"user", "", "kimi-k3", true}, &too_long).reason.code(),
            Status::Code::kInvalidArgument);
}

TEST(PolicyDecisionTest, TransformationsLowerEffortAndCapOutput) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("hello");
  PolicyDecision d = DecideRequest(*active, {"user", "", "kimi-k3", true}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  EXPECT_EQ(body["chat_template_kwargs"]["thinking_effort"], "high");
  EXPECT_EQ(body["max_tokens"], 2048);
  EXPECT_EQ(d.transformations, (std::vector<std::string>{"thinking_effort:max->high", "max_tokens:2048"}));
}

TEST(PolicyDecisionTest, KeyRuleWinsOverRoleRule) {
  auto active = Active(LoadShipped("examples/hospital.json"));
  Json body = Chat("hello");
  body["max_tokens"] = 10000;
  EXPECT_TRUE(DecideRequest(*active, {"user", "key_0123456789abcdef", "kimi-k3", true}, &body).allowed());
  Json again = Chat("hello");
  again["max_tokens"] = 10000;
  EXPECT_FALSE(DecideRequest(*active, {"user", "key_other", "kimi-k3", true}, &again).allowed());
}

}  // namespace
}  // namespace kimi::policy
