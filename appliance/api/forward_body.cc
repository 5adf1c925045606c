#include "api/forward_body.h"

#include <string_view>

#include "api/request/field_error.h"

namespace kimi::api {
namespace {

using Json = nlohmann::ordered_json;
using request::In;

// The top-level fields an upstream receives as the request rules accepted them. Everything else
// stays here: fields the appliance writes itself (the rendered texts, the tool choice and the
// stop strings as the policy left them, max_tokens, the thinking settings as
// chat_template_kwargs), fields meant for the appliance (user, metadata, store, service_tier)
// and every field it does not know (a vLLM server would act on chat_template,
// priority, kv_transfer_params, guided_json, ...: none of them passed the policy).
constexpr std::string_view kShared[] = {"model", "temperature", "top_p", "top_k", "n", "stream", "stream_options",
                                        "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "seed"};
constexpr std::string_view kChat[] = {"top_logprobs", "parallel_tool_calls", "add_generation_prompt"};
// Not `suffix`: text the prompt does not print and the policy does not read.
constexpr std::string_view kCompletion[] = {"echo", "best_of"};
// A message's keys the chat format reads (engine/chat/chat_format.cc) and the policy scans
// (kimi::ForEachRenderedText, rendered_texts.cc); the rest stays here.
constexpr std::string_view kMessageKeys[] = {"role", "content", "name", "id", "tool", "tool_calls", "tool_call_id",
                                             "reasoning_content", "reasoning", "tools"};

// An image part as OpenAI's image_url part of its URL alone (the request rules admit base64
// data: URLs of images only), and its `detail` when it is one of OpenAI's values: any other key
// of the part would be text the policy never read.
Json ForwardedImage(const Json& part, const std::string& type) {
  const Json& image = part.contains(type) ? part[type] : Json();
  Json image_url = {{"url", image.is_object() && image.contains("url") ? image["url"] : image}};
  if (image.is_object() && image.contains("detail") && image["detail"].is_string()) {
    const std::string detail = image["detail"].get<std::string>();
    if (detail == "auto" || detail == "low" || detail == "high") image_url["detail"] = detail;
  }
  return Json{{"type", "image_url"}, {"image_url", std::move(image_url)}};
}

// Content parts as the chat format renders them: an image part as ForwardedImage (an image
// placeholder in the prompt), any other part as the text part of its `text`, which is what the
// prompt prints of it and what the policy scanned; a part without text prints nothing and is
// left out.
Json ForwardedContent(const Json& content) {
  if (!content.is_array()) return content;
  Json parts = Json::array();
  for (const Json& part : content) {
    if (!part.is_object()) continue;
    const std::string type = part.contains("type") && part["type"].is_string() ? part["type"].get<std::string>() : "";
    if (type == "image" || type == "image_url") {
      parts.push_back(ForwardedImage(part, type));
    } else if (part.contains("text")) {
      parts.push_back(Json{{"type", "text"}, {"text", part["text"]}});
    }
  }
  return parts;
}

// An assistant's tool calls as the chat format reads them: id, type and the function's name and
// arguments (in `function`, or on the call itself: flat calls).
Json ForwardedCalls(const Json& calls) {
  if (!calls.is_array()) return calls;
  Json out = Json::array();
  for (const Json& call : calls) {
    if (!call.is_object()) continue;
    Json kept = Json::object();
    for (const char* key : {"id", "type", "name", "arguments"}) {
      if (call.contains(key)) kept[key] = call[key];
    }
    if (call.contains("function") && call["function"].is_object()) {
      Json function = Json::object();
      for (const char* key : {"name", "arguments"}) {
        if (call["function"].contains(key)) function[key] = call["function"][key];
      }
      kept["function"] = std::move(function);
    }
    out.push_back(std::move(kept));
  }
  return out;
}

Json ForwardedMessages(const Json& messages) {
  if (!messages.is_array()) return messages;
  Json out = Json::array();
  for (const Json& message : messages) {
    if (!message.is_object()) {
      out.push_back(message);
      continue;
    }
    Json kept = Json::object();
    for (const auto& [key, value] : message.items()) {
      if (!In(kMessageKeys, key)) continue;
      kept[key] = key == "content" ? ForwardedContent(value) : key == "tool_calls" ? ForwardedCalls(value) : value;
    }
    out.push_back(std::move(kept));
  }
  return out;
}

}  // namespace

Json ForwardBody(const BackendRequest& request) {
  const ServingRequest& typed = request.serving;
  const bool chat = request.endpoint == Endpoint::kChatCompletions;
  Json out = Json::object();
  if (request.validated_body != nullptr) {
    for (const auto& [key, value] : request.validated_body->items()) {
      if (In(kShared, key) || (chat ? In(kChat, key) : In(kCompletion, key))) out[key] = value;
    }
  }
  // The rendered texts from the typed request (so the policy's rewrites reach the upstream).
  if (chat) {
    out["messages"] = ForwardedMessages(typed.chat.messages);
    if (!typed.chat.tools.is_null()) out["tools"] = typed.chat.tools;
    if (typed.chat.has_tool_choice) out["tool_choice"] = typed.chat.tool_choice;
    if (typed.chat.has_response_format) out["response_format"] = typed.chat.response_format;
    // The only kwargs: the K3 template's own thinking settings. A caller's others (tools,
    // add_generation_prompt, any template variable) would reach the template unchecked.
    out["chat_template_kwargs"] = Json{{"thinking", typed.chat.thinking},
                                       {"thinking_effort", typed.chat.thinking_effort},
                                       {"preserve_thinking", typed.chat.preserve_thinking}};
  } else {
    out["prompt"] = typed.prompt;
  }
  // The stop strings as the policy left them.
  if (!typed.generation.stop.empty()) out["stop"] = typed.generation.stop;
  // The output cap the request and the policy settled on; a caller's own max_tokens or
  // max_completion_tokens (a null one too) is not copied over it.
  if (typed.generation.max_tokens) out["max_tokens"] = *typed.generation.max_tokens;
  return out;
}

}  // namespace kimi::api
