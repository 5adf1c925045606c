// thinking {type, keep, effort}, reasoning_effort and chat_template_kwargs, resolved into the
// chat format's thinking / thinking_effort / preserve_thinking (the verifier's
// tests/k3_features/test_thinking_effort.py and its thinking modes "kimi" and "opensource").
#include "api/request/thinking_rules.h"

#include <gtest/gtest.h>

#include "api/request/request_test_util.h"

namespace kimi::api::request {
namespace {

using testing::Accepted;
using testing::ChatWith;
using testing::Rejected;

struct Resolved {
  bool thinking;
  std::optional<std::string> effort;
  bool preserve;
};

Resolved Resolve(const char* fields) {
  auto r = ChatWith(fields);
  EXPECT_TRUE(Accepted(r)) << fields;
  if (!r.ok()) return {};
  return {r->thinking, r->thinking_effort, r->preserve_thinking};
}

void ExpectResolved(const char* fields, bool thinking, std::optional<std::string> effort, bool preserve = true) {
  Resolved got = Resolve(fields);
  EXPECT_EQ(got.thinking, thinking) << fields;
  EXPECT_EQ(got.effort, effort) << fields;
  EXPECT_EQ(got.preserve, preserve) << fields;
}

TEST(ThinkingRulesTest, DefaultsAreThinkingOnEffortMaxKeepAll) {
  ExpectResolved("{}", true, "max");
  ExpectResolved(R"({"thinking": {"keep": "all"}})", true, "max");
  ExpectResolved(R"({"thinking": {"type": "enabled", "keep": "all"}})", true, "max");
  ExpectResolved(R"({"thinking": {}})", true, "max");
}

TEST(ThinkingRulesTest, TypeSwitchesThinking) {
  ExpectResolved(R"({"thinking": {"type": "disabled"}})", false, "max");
  ExpectResolved(R"({"thinking": {"type": "enabled"}})", true, "max");
  ExpectResolved(R"({"thinking": false})", false, "max");
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"type": "on"}})"), "thinking.type", "\"enabled\" or \"disabled\""));
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"type": true}})"), "thinking.type"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": "enabled"})"), "thinking", "must be an object"));
}

TEST(ThinkingRulesTest, EveryEffortLevelIsAccepted) {
  for (const char* level : {"low", "medium", "high", "max"}) {
    std::string fields = std::string(R"({"thinking": {"type": "enabled", "keep": "all", "effort": ")") + level + "\"}}";
    ExpectResolved(fields.c_str(), true, level);
  }
}

TEST(ThinkingRulesTest, UnknownEffortIsRejected) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"effort": "ultra"}})"), "thinking.effort", "low, medium, high, max"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"reasoning_effort": "minimal"})"), "reasoning_effort"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking_effort": 3})"), "thinking_effort"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"chat_template_kwargs": {"thinking_effort": "x"}})"),
                       "chat_template_kwargs.thinking_effort"));
  // A bad reasoning_effort is refused even where thinking.effort would win.
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"effort": "low"}, "reasoning_effort": "ultra"})"), "reasoning_effort"));
}

TEST(ThinkingRulesTest, ReasoningEffortOnlyWhenThinkingEffortIsAbsent) {
  ExpectResolved(R"({"thinking": {"type": "enabled", "keep": "all", "effort": "low"}, "reasoning_effort": "max"})", true,
                 "low");
  ExpectResolved(R"({"thinking": {"type": "enabled", "keep": "all"}, "reasoning_effort": "low"})", true, "low");
  ExpectResolved(R"({"reasoning_effort": "high"})", true, "high");
  ExpectResolved(R"({"thinking_effort": "medium", "reasoning_effort": "high"})", true, "medium");
}

TEST(ThinkingRulesTest, KeepMustBeAllWhileThinking) {
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"type": "enabled", "keep": "none"}})"), "thinking.keep", "\"all\""));
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"keep": "after_last_user"}})"), "thinking.keep"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"thinking": {"keep": true}})"), "thinking.keep"));
  // Disabled: keep is ignored, whatever it says.
  ExpectResolved(R"({"thinking": {"type": "disabled", "keep": "none", "effort": "high"}})", false, "high");
}

TEST(ThinkingRulesTest, ChatTemplateKwargsAreAcceptedAndWin) {
  ExpectResolved(R"({"chat_template_kwargs": {"thinking": false}})", false, "max");
  ExpectResolved(R"({"chat_template_kwargs": {"thinking": true}})", true, "max");
  ExpectResolved(R"({"chat_template_kwargs": {"thinking": false}, "thinking": {"type": "enabled"}})", false, "max");
  ExpectResolved(R"({"chat_template_kwargs": {"thinking_effort": "low"}, "thinking": {"effort": "high"}})", true, "low");
  ExpectResolved(R"({"chat_template_kwargs": {"thinking_effort": null}})", true, std::nullopt);
  ExpectResolved(R"({"chat_template_kwargs": {"preserve_thinking": false}})", true, "max", false);
  ExpectResolved(R"({"preserve_thinking": false})", true, "max", false);
  ExpectResolved(R"({"chat_template_kwargs": null})", true, "max");
  EXPECT_TRUE(Rejected(ChatWith(R"({"chat_template_kwargs": {"thinking": "yes"}})"), "chat_template_kwargs.thinking",
                       "true or false"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"chat_template_kwargs": []})"), "chat_template_kwargs", "must be an object"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"chat_template_kwargs": {"preserve_thinking": 1}})"),
                       "chat_template_kwargs.preserve_thinking"));
  EXPECT_TRUE(Rejected(ChatWith(R"({"preserve_thinking": "no"})"), "preserve_thinking"));
}

TEST(ThinkingRulesTest, ResolvedControlsAreWrittenAsChatTemplateKwargs) {
  auto r = ChatWith(R"({"thinking": {"type": "disabled", "effort": "low"}, "reasoning_effort": "high",
                        "thinking_effort": "medium", "preserve_thinking": true,
                        "chat_template_kwargs": {"custom": 1}})");
  ASSERT_TRUE(Accepted(r));
  const Json& body = r->body;
  for (const char* gone : {"thinking", "reasoning_effort", "thinking_effort", "preserve_thinking"}) {
    EXPECT_FALSE(body.contains(gone)) << gone;
  }
  EXPECT_EQ(body["chat_template_kwargs"],
            Json::parse(R"({"custom": 1, "thinking": false, "thinking_effort": "low", "preserve_thinking": true})"));
}

}  // namespace
}  // namespace kimi::api::request
