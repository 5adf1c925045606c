#include "api/forward_body.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

Json ForwardBody(const BackendRequest& request) {
  Json out = request.validated_body != nullptr ? *request.validated_body : Json::object();
  const ServingRequest& typed = request.serving;
  if (request.endpoint == Endpoint::kChatCompletions) {
    out["messages"] = typed.chat.messages;
    if (!typed.chat.tools.is_null()) out["tools"] = typed.chat.tools;
    if (typed.chat.has_response_format) out["response_format"] = typed.chat.response_format;
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
