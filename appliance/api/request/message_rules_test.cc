#include "api/request/message_rules.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::Chat;
using testing::ChatBody;
using testing::Rejected;

Result<ValidatedRequest> WithMessages(const char* messages_json) {
  return Chat(ChatBody({{"messages", Json::parse(messages_json)}}));
}

TEST(MessageRulesTest, MessagesAreARequiredNonEmptyArray) {
  Json body = ChatBody();
  body.erase("messages");
  EXPECT_TRUE(Rejected(Chat(body), "messages", "is required"));
  EXPECT_TRUE(Rejected(WithMessages("[]"), "messages", "at least one message"));
  EXPECT_TRUE(Rejected(WithMessages(R"({"role": "user"})"), "messages", "must be an array"));
  EXPECT_TRUE(Rejected(WithMessages(R"(["hello"])"), "messages[0]", "must be an object"));
}

TEST(MessageRulesTest, RoleIsRequiredAndKnown) {
  EXPECT_TRUE(Rejected(WithMessages(R"([{"content": "hi"}])"), "messages[0].role", "is required"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "robot", "content": "hi"}])"), "messages[0].role", "must be one of"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": 1, "content": "hi"}])"), "messages[0].role", "must be a string"));
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi"}])")));
}

TEST(MessageRulesTest, ContentIsTextOrParts) {
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])")));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": 5}])"), "messages[0].content", "string or an array"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"text": "hi"}]}])"), "messages[0].content[0].type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "text"}]}])"), "messages[0].content[0].text"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "text", "text": 1}]}])"),
                       "messages[0].content[0].text"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": ["hi"]}])"), "messages[0].content[0]"));
  // A part is read for its text (any type) or as an image; one without either would reach the
  // model as nothing.
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}])")));
  for (const char* part : {R"({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}})",
                           R"({"type": "file", "file": {"file_data": "AAAA", "filename": "a.pdf"}})",
                           R"({"type": "refusal", "refusal": "no"})", R"({"type": "input_text"})"}) {
    const std::string messages = std::string(R"([{"role": "user", "content": [{"type": "text", "text": "a"}, )") + part + "]}]";
    EXPECT_TRUE(Rejected(WithMessages(messages.c_str()),
                         "messages[0].content[1].type", "a part this model cannot read"))
        << part;
  }
  const std::string long_type = R"([{"role": "user", "content": [{"type": ")" + std::string(100'000, 'x') + R"("}]}])";
  const Result<ValidatedRequest> long_refused = WithMessages(long_type.c_str());
  EXPECT_TRUE(Rejected(long_refused, "messages[0].content[0].type", "is another type, a part"));
  EXPECT_LT(long_refused.status().message().size(), 200u);  // the caller's bytes are not echoed back
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "input_text", "text": 5}]}])"),
                       "messages[0].content[0].text", "must be a string"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user"}])"), "messages[0].content", "is required in a user message"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": "hi", "name": 3}])"), "messages[0].name"));
}

// An upstream fetches the URL of an image part: only inline images pass (an http URL would make
// a server inside the network connect where the caller chose).
TEST(MessageRulesTest, ImagePartsAreInline) {
  EXPECT_TRUE(Accepted(WithMessages(
      R"([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}])")));
  EXPECT_TRUE(Rejected(WithMessages(
                           R"([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://10.0.0.5/a.png"}}]}])"),
                       "messages[0].content[0].image_url.url", "data: URL"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "image_url", "image_url": "file:///etc/passwd"}]}])"),
                       "messages[0].content[0].image_url.url", "data: URL"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "image_url"}]}])"),
                       "messages[0].content[0].image_url.url"));
  // The `image` part type is held to the same rule.
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "user", "content": [{"type": "image", "image": "data:image/jpeg;base64,AAAA"}]}])")));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "image", "image": "http://169.254.169.254/"}]}])"),
                       "messages[0].content[0].image", "data: URL"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": [{"type": "image", "image": {"url": "http://x/"}}]}])"),
                       "messages[0].content[0].image.url", "data: URL"));
  // Text in a data: URL would pass by the policy, which reads no image.
  for (const char* url : {"data:text/plain,card 4111 1111 1111 1111", "data:,x", "data:image/png,raw",
                          "data:image/svg+xml;utf8,<svg/>"}) {
    const std::string messages =
        std::string(R"([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": ")") + url + R"("}}]}])";
    EXPECT_TRUE(Rejected(WithMessages(messages.c_str()),
                         "messages[0].content[0].image_url.url", "of an image"))
        << url;
  }
}

TEST(MessageRulesTest, AssistantToolCallsHaveAFunctionWithAName) {
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "user", "content": "hi"},
    {"role": "assistant", "content": null, "reasoning_content": "r",
     "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
    {"role": "tool", "tool_call_id": "c0", "content": "42"}])")));
  EXPECT_TRUE(Accepted(WithMessages(R"([{"role": "user", "content": "hi"},
    {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}])")));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "tool_calls": {}}])"), "messages[0].tool_calls"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "tool_calls": [{"type": "function"}]}])"),
                       "messages[0].tool_calls[0].function", "is required"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}])"),
                       "messages[0].tool_calls[0].function.name"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "tool_calls": [{"type": "x", "function": {"name": "f"}}]}])"),
                       "messages[0].tool_calls[0].type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}])"),
                       "messages[0].tool_calls[0].function.arguments"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "assistant", "content": "a", "reasoning_content": 1}])"),
                       "messages[0].reasoning_content"));
}

}  // namespace
}  // namespace kimi::api::request
