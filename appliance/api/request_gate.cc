#include "api/request_gate.h"

#include "kimi/chat_format.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

Status PrepareRequest(Endpoint endpoint, Json* body) {
  if (!body->is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  if (body->contains("model") && !(*body)["model"].is_string()) return Status::InvalidArgument("model must be a string");
  if (body->contains("stream") && !(*body)["stream"].is_boolean() && !(*body)["stream"].is_null()) {
    return Status::InvalidArgument("stream must be a boolean");
  }
  if (endpoint == Endpoint::kChatCompletions) {
    if (!body->contains("messages")) return Status::InvalidArgument("messages is required");
    if (!(*body)["messages"].is_array()) return Status::InvalidArgument("messages must be an array");
  } else if (!body->contains("prompt")) {
    return Status::InvalidArgument("prompt is required");
  }
  return Status::OK();
}

ResponseMode ReadResponseMode(Endpoint endpoint, const Json& body) {
  ResponseMode mode;
  mode.stream = body.value("stream", Json(false)).is_boolean() && body.value("stream", Json(false)).get<bool>();
  if (body.contains("stream_options") && body["stream_options"].is_object()) {
    const Json& include = body["stream_options"].value("include_usage", Json(false));
    mode.include_usage = include.is_boolean() && include.get<bool>();
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
