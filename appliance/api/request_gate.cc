#include "api/request_gate.h"

#include <atomic>

#include "api/request/request_validator.h"
#include "kimi/chat_format.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

namespace {
std::atomic<uint64_t> g_parses{0};
}  // namespace

uint64_t RequestParses() { return g_parses.load(std::memory_order_relaxed); }

Status PrepareRequest(Endpoint endpoint, Json* body, const ModelRequestRules& rules) {
  g_parses.fetch_add(1, std::memory_order_relaxed);
  // The request rules (docs/api.md, "Request rules"); the body becomes their normalised form.
  KIMI_ASSIGN_OR_RETURN(ValidatedRequest validated, endpoint == Endpoint::kChatCompletions
                                                         ? ValidateChatCompletion(*body, rules)
                                                         : ValidateCompletion(*body, rules));
  *body = std::move(validated.body);
  return Status::OK();
}

ResponseMode ReadResponseMode(Endpoint endpoint, const Json& body) {
  ResponseMode mode;
  mode.stream = body.value("stream", Json(false)).is_boolean() && body.value("stream", Json(false)).get<bool>();
  if (body.contains("stream_options") && body["stream_options"].is_object()) {
    const Json& include = body["stream_options"].value("include_usage", Json(false));
    mode.include_usage = include.is_boolean() && include.get<bool>();
  }
  if (const auto it = body.find("logprobs"); it != body.end()) {
    mode.logprobs = it->is_number_integer() || (it->is_boolean() && it->get<bool>());
  }
  if (endpoint == Endpoint::kChatCompletions) {
    Result<ChatRequest> request = ParseChatRequest(body);
    mode.thinking = !request.ok() || request->thinking;
  } else {
    mode.thinking = false;
  }
  return mode;
}

}  // namespace kimi::api
