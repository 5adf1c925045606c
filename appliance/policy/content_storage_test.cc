#include "policy/content_storage.h"

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"

namespace kimi::policy {
namespace {

std::shared_ptr<ActivePolicy> Load(const char* name, const auth::ServerSecret* secret) {
  auto active = std::make_shared<ActivePolicy>();
  active->policy = *ParsePolicy(testing::LoadShipped(name));
  active->redactor = std::move(Redactor::Create(active->policy.redaction, secret).value());
  return active;
}

TEST(ContentStorageTest, DefaultStoresNothing) {
  auto active = Load("default.json", nullptr);
  EXPECT_FALSE(ContentForStorage(*active, "a@b.io", "ok").has_value());
  EXPECT_EQ(RetentionCutoffMs(active->policy, 31LL * 86400000), 86400000);
}

TEST(ContentStorageTest, HospitalStoresRedactedPromptsOnlyAndMasksBlockedValues) {
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({3});
  auto active = Load("examples/hospital.json", &secret);
  std::optional<ContentToStore> c = ContentForStorage(*active, "MRN-0012345 card 4111111111111111", "answer");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->prompt, "[REDACTED:MEDICAL_RECORD] card [REDACTED:PAYMENT_CARD]");
  EXPECT_EQ(c->completion, "");
  EXPECT_EQ(c->redactions.size(), 2u);
}

TEST(ContentStorageTest, RequestBodyIsRedactedOnItsDecodedValues) {
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({3});
  auto active = Load("examples/hospital.json", &secret);
  // Escapes spell the values differently in the JSON text than the model reads them.
  const std::string body =
      R"({"messages":[{"role":"user","content":"mail alice\u0040example.com, ssn 123\u002d45\u002d6789"}],)"
      R"("tools":[{"type":"function","function":{"name":"f","description":"bob\u0040example.org"}}]})";
  std::optional<ContentToStore> c = ContentForStorage(*active, body, "");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->prompt.find("alice"), std::string::npos) << c->prompt;
  EXPECT_EQ(c->prompt.find("bob"), std::string::npos) << c->prompt;
  EXPECT_EQ(c->prompt.find("6789"), std::string::npos) << c->prompt;
  const nlohmann::json stored = nlohmann::json::parse(c->prompt);
  EXPECT_EQ(stored["messages"][0]["content"], "mail [REDACTED:EMAIL], ssn [REDACTED:US_SSN]");
  EXPECT_EQ(c->redactions.size(), 2u);
}

TEST(ContentStorageTest, BodyWithNothingToRedactIsStoredAsSent) {
  auto active = Load("examples/hospital.json", nullptr);
  const std::string body = R"({"messages": [{"role": "user", "content": "hello"}]})";
  EXPECT_EQ(ContentForStorage(*active, body, "")->prompt, body);
}

// A client's X-Request-Id and path are stored and logged: under a policy that redacts before
// storage, what it would redact in a prompt is redacted there too.
TEST(ContentStorageTest, ClientTextOutsideTheBodyIsRedactedLikeStoredContent) {
  auto shipped = Load("default.json", nullptr);
  EXPECT_EQ(ClientTextForStorage(*shipped, "card 4111111111111111"), "card [REDACTED:PAYMENT_CARD]");
  EXPECT_EQ(ClientTextForStorage(*shipped, "/v1/users/alice@example.com"), "/v1/users/[REDACTED:EMAIL]");
  EXPECT_EQ(ClientTextForStorage(*shipped, "req-7f3a9c"), "req-7f3a9c");
  // A blocked category is masked too: by now the request is over, and the value must not stay.
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({3});
  auto bank = Load("examples/bank.json", &secret);
  EXPECT_EQ(ClientTextForStorage(*bank, "4111111111111111").find("4111"), std::string::npos);
  // Without redaction before storage, as sent.
  shipped->policy.redaction.before_storage = false;
  EXPECT_EQ(ClientTextForStorage(*shipped, "card 4111111111111111"), "card 4111111111111111");
}

}  // namespace
}  // namespace kimi::policy
