// The request path of /v1/chat/completions and /v1/completions as the daemon runs it
// (http/openai_handlers.cc ServeGeneration): parse, the request gate, the policy decision,
// then what the embedded engine does before generating (serving/chat_service.cc Start): the
// rendered prompt and the structured-output constraint of a response_format or a required
// tool choice (serving::StructuredRequests, over the demo vocabulary). The prompt-token counter stands in for the engine's
// (kimi::CountPromptTokens) with the same steps over the demo tokenizer: render, answer the
// byte count when it is bound enough, else encode.
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/request_gate.h"
#include "auth/server_secret.h"
#include "fuzz_support.h"
#include "fuzz_targets.h"
#include "http/body_nesting.h"
#include "kimi/chat_format.h"
#include "kimi/prompt_encoding.h"
#include "policy/content_storage.h"
#include "policy/policy_decision.h"
#include "serving/structured_request.h"
#include "text/tokenizer_test_util.h"

namespace kimi::fuzz {
namespace {

using Json = nlohmann::ordered_json;

const std::shared_ptr<const StructuredVocabulary>& DemoVocabulary() {
  static const std::shared_ptr<const StructuredVocabulary> vocabulary = [] {
    auto built = StructuredVocabulary::Build(text::testing::DemoTokenizer());
    if (!built.ok()) SetupFailed("demo vocabulary: " + built.status().ToString());
    return *built;
  }();
  return vocabulary;
}

const policy::ActivePolicy& BankPolicy() {
  static const auth::ServerSecret secret = auth::ServerSecret::FromBytes({7});
  static const policy::ActivePolicy* active = [] {
    auto out = new policy::ActivePolicy();
    out->version = 1;
    out->document = nlohmann::json::parse(ReadSourceFile("policies/examples/bank.json"), nullptr, false);
    Result<policy::Policy> parsed = policy::ParsePolicy(out->document);
    if (!parsed.ok()) SetupFailed("bank.json: " + parsed.status().ToString());
    out->policy = std::move(parsed).value();
    auto redactor = policy::Redactor::Create(out->policy.redaction, &secret);
    if (!redactor.ok()) SetupFailed("bank.json redaction: " + redactor.status().ToString());
    out->redactor = std::move(redactor).value();
    return out;
  }();
  return *active;
}

Result<policy::PromptTokens> CountPromptTokens(const Json& body, bool chat, int64_t bound_enough) {
  const Tokenizer& tokenizer = text::testing::DemoTokenizer();
  if (!chat) {
    const std::string prompt = body.value("prompt", Json("")).is_string() ? body["prompt"].get<std::string>() : "";
    if (bound_enough >= 0 && int64_t(prompt.size()) <= bound_enough) return policy::PromptTokens{int64_t(prompt.size()), false};
    KIMI_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer.Encode(prompt, /*allow_special=*/false));
    return policy::PromptTokens{int64_t(ids.size()), true};
  }
  KIMI_ASSIGN_OR_RETURN(ChatRequest request, ParseChatRequest(body));
  KIMI_ASSIGN_OR_RETURN(RenderedPrompt rendered, ChatFormat::Render(request));
  const auto bytes = int64_t(rendered.text_without_stub().size());
  if (bound_enough >= 0 && bytes <= bound_enough) return policy::PromptTokens{bytes, false};
  KIMI_ASSIGN_OR_RETURN(PromptIds ids, EncodePrompt(tokenizer, rendered));
  return policy::PromptTokens{int64_t(ids.prompt_tokens), true};
}

// One endpoint, one caller: true when the request would reach generation (the gate accepted it,
// the policy allowed it, the engine rendered it and compiled its structure).
bool Serve(api::Endpoint endpoint, Json body, const std::string& role) {
  if (!api::PrepareRequest(endpoint, &body).ok()) return false;
  policy::RequestFacts facts;
  facts.role = role;
  facts.chat = endpoint == api::Endpoint::kChatCompletions;
  facts.model = body.contains("model") && body["model"].is_string() ? body["model"].get<std::string>() : "kimi-k3";
  facts.count_prompt_tokens = CountPromptTokens;
  policy::PolicyDecision decision = policy::DecideRequest(BankPolicy(), facts, &body);
  (void)policy::DecisionAuditEntries(decision);
  if (!decision.allowed()) return false;
  (void)api::ReadResponseMode(endpoint, body);
  (void)policy::ContentForStorage(BankPolicy(), body.dump(-1, ' ', false, Json::error_handler_t::replace), "ok");
  if (facts.chat) {
    Result<ChatRequest> chat = ParseChatRequest(body);
    if (!chat.ok()) return false;
    Result<RenderedPrompt> rendered = ChatFormat::Render(*chat);
    if (rendered.ok() && rendered->generation_stub_size > rendered->text.size()) __builtin_trap();
    // A fresh cache per input: a schema compiled for an earlier input must not hide this one.
    serving::StructuredRequests structured(DemoVocabulary());
    if (!structured.ConstraintFor(body, *chat).ok()) return false;
  }
  return true;
}

}  // namespace

bool FuzzRequestOnce(const uint8_t* data, size_t size) {
  // What the dispatcher refuses before any handler runs (http/body_nesting.h).
  if (!http::CheckBodyNesting(std::string_view(reinterpret_cast<const char*>(data), size)).ok()) return false;
  const Json body = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return false;
  bool accepted = false;
  for (api::Endpoint endpoint : {api::Endpoint::kChatCompletions, api::Endpoint::kCompletions}) {
    // A teller (no tools, prompt-token limits: the counter runs) and an operator (tools).
    for (const char* role : {"user", "operator"}) accepted = Serve(endpoint, body, role) || accepted;
  }
  return accepted;
}

}  // namespace kimi::fuzz
