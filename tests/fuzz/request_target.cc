// The request path of /v1/chat/completions and /v1/completions as the daemon runs it
// (http/openai_handlers.cc ServeGeneration): the request gate's one parse into the typed
// request, the policy decision, the body an upstream would receive, then what the embedded
// engine does before generating (serving/chat_service.cc Start): the rendered prompt and the
// structured-output constraint of a response_format or a required tool choice
// (serving::StructuredRequests, over the demo vocabulary). The prompt-token counter is the
// engine's (kimi::CountPromptTokens) over the demo tokenizer.
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/forward_body.h"
#include "api/request_gate.h"
#include "auth/server_secret.h"
#include "fuzz_support.h"
#include "fuzz_targets.h"
#include "http/body_checks.h"
#include "kimi/request_prompt.h"
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

Result<policy::PromptTokens> CountPromptTokens(EncodedRequestPrompt* prompt, bool chat, int64_t bound_enough) {
  KIMI_ASSIGN_OR_RETURN(PromptTokenCount counted,
                        kimi::CountPromptTokens(text::testing::DemoTokenizer(),
                                                chat ? ServingEndpoint::kChatCompletions : ServingEndpoint::kCompletions,
                                                prompt, bound_enough));
  return policy::PromptTokens{counted.tokens, counted.exact};
}

// One endpoint, one caller: true when the request would reach generation (the gate accepted it,
// the policy allowed it, the engine rendered it and compiled its structure).
bool Serve(api::Endpoint endpoint, const Json& body, const std::string& role) {
  Result<api::ApiRequest> parsed = api::ParseRequest(endpoint, body);
  if (!parsed.ok()) return false;
  policy::RequestFacts facts;
  facts.role = role;
  facts.chat = endpoint == api::Endpoint::kChatCompletions;
  facts.model = parsed->validated.model;
  facts.count_prompt_tokens = CountPromptTokens;
  policy::PolicyDecision decision = policy::DecideRequest(BankPolicy(), facts, &*parsed);
  (void)policy::DecisionAuditEntries(decision);
  if (!decision.allowed()) return false;
  (void)api::ReadResponseMode(*parsed);
  (void)policy::ContentForStorage(BankPolicy(), body.dump(-1, ' ', false, Json::error_handler_t::replace), "ok");
  const api::BackendRequest request = api::ToBackendRequest(std::move(parsed).value(), "fuzz", facts.model);
  (void)api::ForwardBody(request);
  Result<EncodedRequestPrompt> rendered = RenderRequestPrompt(request.serving);
  if (!rendered.ok()) return false;
  if (rendered->rendered.generation_stub_size > rendered->rendered.text.size()) __builtin_trap();
  if (facts.chat) {
    // A fresh cache per input: a schema compiled for an earlier input must not hide this one.
    serving::StructuredRequests structured(DemoVocabulary());
    if (!structured.ConstraintFor(request.serving).ok()) return false;
  }
  return true;
}

}  // namespace

bool FuzzRequestOnce(const uint8_t* data, size_t size) {
  // What the dispatcher refuses before any handler runs (http/body_checks.h).
  if (!http::CheckRequestBody(std::string_view(reinterpret_cast<const char*>(data), size)).ok()) return false;
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
