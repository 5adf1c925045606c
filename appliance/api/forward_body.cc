#include "api/forward_body.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

Json ForwardBody(const BackendRequest& request) {
  const ServingRequest& typed = request.serving;
  const bool chat = request.endpoint == Endpoint::kChatCompletions;
  // The validated body's fields in their order, each rendered text taken from the typed
  // request instead (so the policy's rewrites reach the upstream and nothing is copied twice).
  Json out = Json::object();
  if (request.validated_body != nullptr) {
    for (const auto& [key, value] : request.validated_body->items()) {
      if (chat && key == "messages") {
        out[key] = typed.chat.messages;
      } else if (chat && key == "tools" && !typed.chat.tools.is_null()) {
        out[key] = typed.chat.tools;
      } else if (chat && key == "response_format" && typed.chat.has_response_format) {
        out[key] = typed.chat.response_format;
      } else {
        out[key] = value;
      }
    }
  }
  if (chat) {
    if (!out.contains("messages")) out["messages"] = typed.chat.messages;
    Json& kwargs = out["chat_template_kwargs"];
    if (!kwargs.is_object()) kwargs = Json::object();
    kwargs["thinking"] = typed.chat.thinking;
    kwargs["thinking_effort"] = typed.chat.thinking_effort;
    kwargs["preserve_thinking"] = typed.chat.preserve_thinking;
  } else {
    out["prompt"] = typed.prompt;
  }
  if (typed.generation.max_tokens && !out.contains("max_tokens") && !out.contains("max_completion_tokens")) {
    out["max_tokens"] = *typed.generation.max_tokens;
  }
  return out;
}

}  // namespace kimi::api
