// The decision step without the server: access rules, limits, redaction before the model,
// block naming the category.
#include "policy/policy_decision.h"

#include <gtest/gtest.h>

#include "kimi/chat_format.h"
#include "api/forward_body.h"
#include "api/request_gate.h"
#include "kimi/request_prompt.h"
#include "kimi/serving_request.h"
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

// A stand-in for the engine's count (kimi::CountPromptTokens): one token per "word" of the
// rendered prompt, exact; remembers the bound it was given and the prompt it counted.
struct WordCounter {
  int64_t calls = 0;
  int64_t bound = -1;
  std::string counted;
  PromptTokenCounter Counter() {
    return [this](EncodedRequestPrompt* prompt, bool, int64_t bound_enough) -> Result<PromptTokens> {
      ++calls;
      bound = bound_enough;
      counted = prompt->rendered.text;
      int64_t words = 0;
      for (size_t at = 0; (at = counted.find("word", at)) != std::string::npos; at += 4) ++words;
      return PromptTokens{words, true};
    };
  }
};

// The decision over a body as the API hands it on: read into the typed request (without the
// API's request rules: these bodies exercise the policy, some would not pass them), decided,
// and, for the assertions on what reaches the model, the body an upstream would receive.
PolicyDecision Decide(const ActivePolicy& active, const RequestFacts& facts, Json* body) {
  api::ApiRequest request;
  request.validated.endpoint = facts.chat ? api::Endpoint::kChatCompletions : api::Endpoint::kCompletions;
  request.validated.model = facts.model;
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    if (!body->contains(field)) continue;
    (std::string_view(field) == "max_tokens" ? request.validated.max_tokens_field
                                             : request.validated.max_completion_tokens_field) = (*body)[field].get<int64_t>();
  }
  request.validated.body = *body;
  Result<ServingRequest> serving =
      ReadServingRequest(*body, facts.chat ? ServingEndpoint::kChatCompletions : ServingEndpoint::kCompletions);
  EXPECT_TRUE(serving.ok()) << serving.status().ToString() << "\n" << body->dump();
  if (!serving.ok()) return PolicyDecision{PolicyDecision::Verdict::kDeny, serving.status()};
  request.serving = std::move(serving).value();
  PolicyDecision decision = DecideRequest(active, facts, &request);
  *body = api::ForwardBody(api::ToBackendRequest(std::move(request), "req-1", facts.model));
  return decision;
}

std::string Words(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "word ";
  return out;
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
  PolicyDecision d = Decide(*active, {"user", "key_1", "kimi-k3", true}, &body);
  EXPECT_TRUE(d.allowed());
  EXPECT_EQ(body["messages"], sent["messages"]);
  EXPECT_TRUE(d.redactions.empty());
  EXPECT_EQ(d.policy_version, 3);
}

TEST(PolicyDecisionTest, BlockNamesTheCategoryNotTheValue) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("Thẻ của tôi là 4111 1111 1111 1111");
  PolicyDecision d = Decide(*active, {"admin", "key_1", "kimi-k3", true}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(d.reason.message().find("payment_card"), std::string::npos);
  EXPECT_EQ(d.reason.message().find("4111"), std::string::npos);
  EXPECT_EQ(DecisionAuditEntries(d), (std::vector<std::string>{"class:chat", "redact:payment_card:block:1"}));
}

TEST(PolicyDecisionTest, NearMissIsNotBlocked) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("order number 4111 1111 1111 1112");
  EXPECT_TRUE(Decide(*active, {"admin", "", "kimi-k3", true}, &body).allowed());
}

TEST(PolicyDecisionTest, RedactsBeforeTheModelAndReportsCounts) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("IBAN GB82WEST12345698765432, mail a@b.io and c@d.org");
  body["messages"].push_back(Json{{"role", "user"}, {"content", Json::array({Json{{"type", "text"}, {"text", "x@y.com"}}})}});
  PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  const std::string first = body["messages"][0]["content"];
  EXPECT_EQ(first.find("GB82"), std::string::npos);
  EXPECT_NE(first.find("[HASH:IBAN:"), std::string::npos);
  EXPECT_NE(first.find("[REDACTED:EMAIL]"), std::string::npos);
  EXPECT_EQ(body["messages"][1]["content"][0]["text"], "[REDACTED:EMAIL]");
  EXPECT_EQ(d.redactions, (std::vector<RedactionDecision>{{"iban", Action::kHash, 1}, {"email", Action::kMask, 3}}));
}

// Each place a chat request's text reaches the prompt, holding the value `text`.
std::vector<std::pair<std::string, Json>> EveryRenderedField(const std::string& text) {
  const Json user = Json{{"role", "user"}, {"content", "hello"}};
  auto with_messages = [&](Json messages) {
    Json body = Chat("hello");
    body["messages"] = std::move(messages);
    return body;
  };
  auto tool = [&](const std::string& name, const std::string& description, const Json& parameters) {
    return Json::array({Json{{"type", "function"},
                             {"function", Json{{"name", name}, {"description", description}, {"parameters", parameters}}}}});
  };
  const Json plain_parameters = Json{{"type", "object"}};
  std::vector<std::pair<std::string, Json>> out;
  out.emplace_back("content", Chat(text));
  out.emplace_back("text part", with_messages(Json::array({Json{{"role", "user"},
                                                          {"content", Json::array({Json{{"type", "text"}, {"text", text}}})}}})));
  out.emplace_back("name", with_messages(Json::array({Json{{"role", "user"}, {"name", text}, {"content", "hi"}}})));
  out.emplace_back("reasoning_content",
                   with_messages(Json::array({user, Json{{"role", "assistant"}, {"reasoning_content", text}, {"content", "ok"}},
                                              user})));
  out.emplace_back("tool call arguments",
                   with_messages(Json::array({user, Json{{"role", "assistant"}, {"tool_calls", Json::array({Json{
                       {"id", "c1"}, {"type", "function"},
                       {"function", Json{{"name", "f"}, {"arguments", Json{{"q", text}}.dump()}}}}})}},
                                              Json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "r"}}})));
  out.emplace_back("tool call name",
                   with_messages(Json::array({user, Json{{"role", "assistant"}, {"tool_calls", Json::array({Json{
                       {"id", "c1"}, {"type", "function"}, {"function", Json{{"name", text}, {"arguments", "{}"}}}}})}},
                                              Json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "r"}}})));
  out.emplace_back("tool message's tool", with_messages(Json::array({user, Json{{"role", "tool"}, {"tool", text}, {"content", "r"}}})));
  Json described = Chat("hello");
  described["tools"] = tool("lookup", text, plain_parameters);
  out.emplace_back("tool description", described);
  Json named = Chat("hello");
  named["tools"] = tool(text, "d", plain_parameters);
  out.emplace_back("tool name", named);
  Json parameter = Chat("hello");
  parameter["tools"] = tool("lookup", "d", Json{{"type", "object"}, {"properties", Json{{"id", Json{{"description", text}}}}}});
  out.emplace_back("parameter description", parameter);
  Json key = Chat("hello");
  key["tools"] = tool("lookup", "d", Json{{"type", "object"}, {"properties", Json{{text, Json{{"type", "string"}}}}}});
  out.emplace_back("parameter name", key);
  out.emplace_back("dynamic tool", with_messages(Json::array({Json{{"role", "system"}, {"tools", tool("late", text, plain_parameters)}},
                                                            user})));
  Json format = Chat("hello");
  format["response_format"] = Json{{"type", "json_schema"},
                                   {"json_schema", Json{{"name", "a"}, {"schema", Json{{"type", "string"}, {"description", text}}}}}};
  out.emplace_back("response_format schema", format);
  return out;
}

TEST(PolicyDecisionTest, BlockAppliesToEveryTextThePromptPrints) {
  auto active = Active(LoadShipped("examples/bank.json"));
  for (const std::string& card : {std::string("4111 1111 1111 1111"), std::string("4111111111111111")}) {
    for (auto& [field, body] : EveryRenderedField("my card " + card)) {
      PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
      EXPECT_FALSE(d.allowed()) << field;
      EXPECT_NE(d.reason.message().find("payment_card"), std::string::npos) << field << ": " << d.reason.ToString();
    }
  }
}

TEST(PolicyDecisionTest, MaskAppliesToEveryTextThePromptPrints) {
  auto active = Active(LoadShipped("examples/bank.json"));
  for (auto& [field, body] : EveryRenderedField("write to alice@example.com")) {
    PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
    ASSERT_TRUE(d.allowed()) << field << ": " << d.reason.ToString();
    Result<RenderedPrompt> prompt = ChatFormat::Render(body);
    ASSERT_TRUE(prompt.ok()) << field << ": " << prompt.status().ToString();
    EXPECT_EQ(prompt->text.find("alice@example.com"), std::string::npos) << field;
    EXPECT_NE(prompt->text.find("[REDACTED:EMAIL]"), std::string::npos) << field;
  }
}

// Every string of the body an upstream receives, put in one at a time as a blocked value: the
// request is refused, or the value is not in what the upstream receives. Call ids, a tool
// result's tool_call_id, a message's id and the stop strings reached the upstream unread (an
// upstream's template may print ids: K2's does).
TEST(PolicyDecisionTest, NoTextReachesAnUpstreamUnchecked) {
  auto active = Active(LoadShipped("examples/bank.json"));
  const std::string card = "4111 1111 1111 1111";
  Json body = Json::parse(R"({"model": "kimi-k3", "stop": ["STOP", "END"],
    "tools": [{"type": "function", "function": {"name": "lookup", "description": "find it",
               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
    "tool_choice": {"type": "function", "function": {"name": "lookup"}}, "messages": [
    {"role": "system", "content": "be brief", "name": "policy", "id": "m0"},
    {"role": "user", "content": [{"type": "text", "text": "look it up"}], "id": "m1"},
    {"role": "assistant", "content": "calling", "reasoning_content": "why",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "found"},
    {"role": "user", "content": "next"}]})");
  // Each string leaf, by its JSON pointer.
  std::vector<std::string> leaves;
  const Json flat = body.flatten();
  for (const auto& [pointer, value] : flat.items()) {
    if (value.is_string() && pointer != "/model" && pointer.find("/role") == std::string::npos) leaves.push_back(pointer);
  }
  ASSERT_GT(leaves.size(), 12u);
  for (const std::string& pointer : leaves) {
    Json marked = body;
    marked[Json::json_pointer(pointer)] = "x " + card;
    PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &marked);
    if (d.allowed()) {
      EXPECT_EQ(marked.dump().find(card), std::string::npos) << pointer << " reached the upstream";
    }
  }
}

TEST(PolicyDecisionTest, EscapedValueInToolArgumentsIsBlocked) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = EveryRenderedField("x")[4].second;  // the tool call's arguments
  body["messages"][1]["tool_calls"][0]["function"]["arguments"] = R"({"ssn": "123\u002d45\u002d6789"})";
  PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_NE(d.reason.message().find("us_ssn"), std::string::npos) << d.reason.ToString();
}

// The shipped bank policy blocks cards: written in full-width digits, or with no-break or
// zero-width characters between the groups, the card was served (the detectors read ASCII).
TEST(PolicyDecisionTest, AValueWrittenInOtherCharactersIsBlocked) {
  auto active = Active(LoadShipped("examples/bank.json"));
  for (const std::string card : {"４１１１ １１１１ １１１１ １１１１", "4111\u00A01111\u00A01111\u00A01111",
                                 "4111\u200B1111\u200B1111\u200B1111", "4111\u20101111\u20101111\u20101111"}) {
    Json body = {{"model", "kimi-k3"}, {"messages", Json::array({{{"role", "user"}, {"content", "pay with " + card}}})}};
    PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
    ASSERT_FALSE(d.allowed()) << card;
    EXPECT_NE(d.reason.message().find("payment_card"), std::string::npos) << d.reason.ToString();
  }
}

TEST(PolicyDecisionTest, ValueSplitAcrossTextPartsIsRefused) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json blocked = Chat("x");
  blocked["messages"][0]["content"] = Json::array({Json{{"type", "text"}, {"text", "card 4111 1111"}},
                                                   Json{{"type", "text"}, {"text", " 1111 1111"}}});
  PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", true}, &blocked);
  ASSERT_FALSE(d.allowed());
  EXPECT_NE(d.reason.message().find("payment_card"), std::string::npos) << d.reason.ToString();
  Json masked = Chat("x");
  masked["messages"][0]["content"] = Json::array({Json{{"type", "text"}, {"text", "mail alice@exam"}},
                                                  Json{{"type", "text"}, {"text", "ple.com today"}}});
  d = Decide(*active, {"admin", "", "kimi-k3", true}, &masked);
  ASSERT_FALSE(d.allowed());
  EXPECT_NE(d.reason.message().find("email"), std::string::npos) << d.reason.ToString();
}

TEST(PolicyDecisionTest, CompletionsPromptIsRedacted) {
  auto active = Active(LoadShipped("examples/hospital.json"));
  Json body{{"model", "kimi-k3"}, {"prompt", Json::array({"Patient MRN-0012345, DOB: 1985-03-14"})}};
  PolicyDecision d = Decide(*active, {"admin", "", "kimi-k3", false}, &body);
  ASSERT_TRUE(d.allowed());
  EXPECT_EQ(body["prompt"], "Patient [REDACTED:MEDICAL_RECORD], DOB: [REDACTED:DATE_OF_BIRTH]");
}

TEST(PolicyDecisionTest, AccessRules) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json other_model = Chat("hello");
  other_model["model"] = "other";
  PolicyDecision d = Decide(*active, {"user", "key_1", "other", true}, &other_model);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kPermissionDenied);

  Json no_rule = Chat("hello");
  EXPECT_EQ(Decide(*active, {"auditor", "", "kimi-k3", true}, &no_rule).reason.code(),
            Status::Code::kPermissionDenied);

  Json tools = Chat("hello");
  tools["tools"] = Json::array({Json{{"type", "function"}, {"function", Json{{"name", "f"}}}}});
  EXPECT_EQ(Decide(*active, {"user", "", "kimi-k3", true}, &tools).reason.code(), Status::Code::kPermissionDenied);

  // Tool history is tool use too: the prompt renders an assistant's calls and a tool's result as
  // tool-call markup even with nothing declared (they were let through before).
  Json history = Chat("hello");
  history["messages"].push_back(Json{{"role", "assistant"},
                                     {"content", ""},
                                     {"tool_calls", Json::array({Json{{"id", "c1"},
                                                                      {"type", "function"},
                                                                      {"function", Json{{"name", "transfer_funds"},
                                                                                        {"arguments", "{}"}}}}})}});
  history["messages"].push_back(Json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "done"}});
  EXPECT_EQ(Decide(*active, {"user", "", "kimi-k3", true}, &history).reason.code(), Status::Code::kPermissionDenied);
  Json result_only = Chat("hello");
  result_only["messages"].push_back(Json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "done"}});
  EXPECT_EQ(Decide(*active, {"user", "", "kimi-k3", true}, &result_only).reason.code(),
            Status::Code::kPermissionDenied);

  Json too_long = Chat("hello");
  too_long["max_tokens"] = 4096;
  EXPECT_EQ(Decide(*active, {"user", "", "kimi-k3", true}, &too_long).reason.code(),
            Status::Code::kInvalidArgument);
}

TEST(PolicyDecisionTest, TransformationsLowerEffortAndCapOutput) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("hello");
  WordCounter words;
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  EXPECT_EQ(body["chat_template_kwargs"]["thinking_effort"], "high");
  EXPECT_EQ(body["max_tokens"], 2048);
  EXPECT_EQ(d.transformations, (std::vector<std::string>{"thinking_effort:max->high", "max_tokens:2048"}));
}

// A null effort leaves out the effort line, which bounds thinking no more than "max": lowered
// the same way (it reached the model as "no effort" past thinking_max: false).
TEST(PolicyDecisionTest, ANullEffortIsLoweredLikeMax) {
  auto active = Active(LoadShipped("examples/bank.json"));
  Json body = Chat("hello");
  body["chat_template_kwargs"]["thinking_effort"] = nullptr;
  WordCounter words;
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  EXPECT_EQ(body["chat_template_kwargs"]["thinking_effort"], "high");
  EXPECT_EQ(d.transformations.front(), "thinking_effort:none->high");
  Json off = Chat("hello");
  off["chat_template_kwargs"] = Json{{"thinking", false}, {"thinking_effort", nullptr}};
  ASSERT_TRUE(Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &off).allowed());
  EXPECT_TRUE(off["chat_template_kwargs"]["thinking_effort"].is_null());  // no thinking, nothing to bound
}

TEST(PolicyDecisionTest, KeyRuleWinsOverRoleRule) {
  auto active = Active(LoadShipped("examples/hospital.json"));
  Json body = Chat("hello");
  body["max_tokens"] = 10000;
  EXPECT_TRUE(Decide(*active, {"user", "key_0123456789abcdef", "kimi-k3", true}, &body).allowed());
  Json again = Chat("hello");
  again["max_tokens"] = 10000;
  EXPECT_FALSE(Decide(*active, {"user", "key_other", "kimi-k3", true}, &again).allowed());
}

// The bank's user rule with smaller limits: long context forbidden above `threshold`, at most
// `max_prompt` prompt tokens.
std::shared_ptr<ActivePolicy> BankWithLimits(int64_t threshold, int64_t max_prompt) {
  nlohmann::json doc = LoadShipped("examples/bank.json");
  doc["access"]["long_context_threshold_tokens"] = threshold;
  for (auto& rule : doc["access"]["rules"]) {
    if (rule["subject"] == "role:user") rule["max_prompt_tokens"] = max_prompt;
  }
  return Active(doc);
}

TEST(PolicyDecisionTest, PromptWithinTheLimitsIsCountedOnceAndAllowed) {
  auto active = BankWithLimits(32768, 1000);
  WordCounter words;
  Json body = Chat(Words(500));
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  EXPECT_EQ(words.calls, 1);
  EXPECT_EQ(words.bound, 1000) << "the counter may stop at the lowest limit that applies";
  EXPECT_EQ(d.checks, std::vector<std::string>{"prompt_tokens:500"});
}

TEST(PolicyDecisionTest, TheRenderedAndCountedPromptTravelsWithTheDecision) {
  auto active = BankWithLimits(32768, 1000);
  int64_t calls = 0;
  PromptTokenCounter counter = [&calls](EncodedRequestPrompt* prompt, bool, int64_t) -> Result<PromptTokens> {
    ++calls;
    prompt->ids = {1, 2, 3};
    prompt->tokenised = true;
    return PromptTokens{3, true};
  };
  Json body = Chat("one two three");
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, counter}, &body);
  ASSERT_TRUE(d.allowed()) << d.reason.ToString();
  ASSERT_NE(d.prompt, nullptr) << "the backend request gets the prompt counted, not a recount";
  EXPECT_EQ(d.prompt->ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_NE(d.prompt->rendered.text.find("one two three"), std::string::npos);
  EXPECT_EQ(calls, 1);
  // Without a limit nothing is counted; the rendering the redaction checked still travels.
  auto unlimited = BankWithLimits(32768, 1000);
  for (auto& rule : unlimited->policy.access.rules) {
    rule.long_context = true;
    rule.max_prompt_tokens = 0;
  }
  Json again = Chat("one two three");
  PolicyDecision rendered_only = Decide(*unlimited, {"user", "", "kimi-k3", true, std::nullopt, counter}, &again);
  ASSERT_NE(rendered_only.prompt, nullptr);
  EXPECT_FALSE(rendered_only.prompt->tokenised);
  EXPECT_EQ(calls, 1);
}

TEST(PolicyDecisionTest, PromptAboveMaxPromptTokensIs400NamingTheLimit) {
  auto active = BankWithLimits(32768, 1000);
  WordCounter words;
  Json body = Chat(Words(1001));
  PolicyDecision d = Decide(*active, {"user", "key_9", "kimi-k3", true, std::nullopt, words.Counter()}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(d.reason.message().find("max_prompt_tokens"), std::string::npos) << d.reason.message();
  EXPECT_NE(d.reason.message().find("1000"), std::string::npos);
  EXPECT_NE(d.reason.message().find("1001"), std::string::npos);
  const std::vector<std::string> entries = DecisionAuditEntries(d);
  EXPECT_NE(std::find(entries.begin(), entries.end(), "max_prompt_tokens:1000:exceeded"), entries.end());
  EXPECT_NE(std::find(entries.begin(), entries.end(), "prompt_tokens:1001"), entries.end());
}

TEST(PolicyDecisionTest, LongContextForbiddenByRoleIs403NamingTheThreshold) {
  auto active = BankWithLimits(100, 1000);
  WordCounter words;
  Json body = Chat(Words(101));
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kPermissionDenied);
  EXPECT_NE(d.reason.message().find("long-context threshold of 100 tokens"), std::string::npos) << d.reason.message();
  EXPECT_EQ(words.bound, 100);
  EXPECT_EQ(d.checks, (std::vector<std::string>{"prompt_tokens:101", "long_context_threshold_tokens:100:exceeded"}));
  // The admin's rule allows long context and sets no prompt limit: nothing is counted.
  WordCounter admin_words;
  Json admin_body = Chat(Words(101));
  EXPECT_TRUE(Decide(*active, {"admin", "", "kimi-k3", true, std::nullopt, admin_words.Counter()}, &admin_body)
                  .allowed());
  EXPECT_EQ(admin_words.calls, 0);
}

TEST(PolicyDecisionTest, PromptLimitWithoutATokenizerIsUnavailable) {
  auto active = BankWithLimits(32768, 1000);
  Json body = Chat("hello");
  PolicyDecision d = Decide(*active, {"user", "", "kimi-k3", true}, &body);
  ASSERT_FALSE(d.allowed());
  EXPECT_EQ(d.reason.code(), Status::Code::kUnavailable);
  EXPECT_NE(d.reason.message().find("tokenizer"), std::string::npos);
}

TEST(PolicyDecisionTest, PromptIsCountedAfterRedaction) {
  auto active = BankWithLimits(32768, 1000);
  WordCounter words;
  Json body = Chat("mail a@b.io please");
  ASSERT_TRUE(Decide(*active, {"user", "", "kimi-k3", true, std::nullopt, words.Counter()}, &body).allowed());
  EXPECT_NE(words.counted.find("mail [REDACTED:EMAIL] please"), std::string::npos) << words.counted;
}

TEST(PolicyDecisionTest, WorkloadClassFromKeyOrHeaderSetsThePriority) {
  auto active = Active(LoadShipped("examples/hospital.json"));
  Json body = Chat("hello");
  PolicyDecision chat = Decide(*active, {"admin", "", "kimi-k3", true}, &body);
  ASSERT_TRUE(chat.allowed()) << chat.reason.ToString();
  EXPECT_EQ(chat.workload_class, "chat");
  EXPECT_EQ(chat.priority, 0);
  EXPECT_EQ(DecisionAuditEntries(chat).front(), "class:chat");

  PolicyDecision by_header = Decide(*active, {"admin", "", "kimi-k3", true, "agentic"}, &body);
  EXPECT_EQ(by_header.workload_class, "agentic");
  EXPECT_EQ(by_header.priority, 1);

  // hospital.json assigns this key the agentic class.
  Json key_body = Chat("hello");
  key_body["max_tokens"] = 100;
  PolicyDecision by_key = Decide(*active, {"user", "key_0123456789abcdef", "kimi-k3", true}, &key_body);
  ASSERT_TRUE(by_key.allowed()) << by_key.reason.ToString();
  EXPECT_EQ(by_key.workload_class, "agentic");

  PolicyDecision unknown = Decide(*active, {"admin", "", "kimi-k3", true, "batch"}, &body);
  ASSERT_FALSE(unknown.allowed());
  EXPECT_EQ(unknown.reason.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.reason.message().find("x-kimi-workload"), std::string::npos) << unknown.reason.message();
}

}  // namespace
}  // namespace kimi::policy
