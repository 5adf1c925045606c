// ParseChatRequest: the chat-completions body's fields that steer the K3 prompt.
#include <string>

#include "kimi/chat_format.h"

#include "kimi/python_text.h"
#include "kimi/untrusted_json.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;

const Json* Find(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Status ReadBool(const Json& value, const std::string& field, bool* out) {
  if (!value.is_boolean()) return Status::InvalidArgument(field + ": must be true or false");
  *out = value.get<bool>();
  return Status::OK();
}

Status ReadThinking(const Json& value, bool* out) {
  if (value.is_boolean()) {
    *out = value.get<bool>();
    return Status::OK();
  }
  if (value.is_object()) {
    const Json* type = Find(value, "type");
    if (type != nullptr && type->is_string()) {
      const auto& t = type->get_ref<const std::string&>();
      if (t == "enabled" || t == "disabled") {
        *out = t == "enabled";
        return Status::OK();
      }
    }
  }
  return Status::InvalidArgument(R"(thinking: must be true, false or {"type": "enabled"|"disabled"})");
}

}  // namespace

Result<ChatRequest> ParseChatRequest(const Json& body) {
  if (!body.is_object()) return Status::InvalidArgument("request body: must be a JSON object");
  // Copying a JSON tree recurses, so depth is checked before any field is copied.
  for (const auto& [key, value] : body.items()) {
    if (!chat::NestingWithin(value, chat::kMaxNesting)) {
      return Status::InvalidArgument(key + ": nested deeper than " + std::to_string(chat::kMaxNesting) + " levels");
    }
  }
  ChatRequest request;
  const Json* messages = Find(body, "messages");
  if (messages == nullptr || !messages->is_array()) {
    return Status::InvalidArgument("messages: must be an array of messages");
  }
  request.messages = *messages;
  if (const Json* tools = Find(body, "tools")) request.tools = *tools;
  if (const Json* choice = Find(body, "tool_choice")) {
    request.has_tool_choice = true;
    request.tool_choice = *choice;
  }
  if (const Json* format = Find(body, "response_format")) {
    request.has_response_format = true;
    request.response_format = *format;
  }
  if (const Json* add = Find(body, "add_generation_prompt")) {
    KIMI_RETURN_IF_ERROR(ReadBool(*add, "add_generation_prompt", &request.add_generation_prompt));
  }

  static const Json kEmpty = Json::object();
  const Json* kwargs = Find(body, "chat_template_kwargs");
  if (kwargs != nullptr && !kwargs->is_object() && !kwargs->is_null()) {
    return Status::InvalidArgument("chat_template_kwargs: must be an object");
  }
  if (kwargs == nullptr || kwargs->is_null()) kwargs = &kEmpty;

  if (const Json* t = Find(*kwargs, "thinking")) {
    KIMI_RETURN_IF_ERROR(ReadBool(*t, "chat_template_kwargs.thinking", &request.thinking));
  } else if (const Json* t2 = Find(body, "thinking")) {
    KIMI_RETURN_IF_ERROR(ReadThinking(*t2, &request.thinking));
  }
  if (const Json* e = Find(*kwargs, "thinking_effort")) {
    request.thinking_effort = *e;
  } else if (const Json* e2 = Find(body, "thinking_effort")) {
    request.thinking_effort = *e2;
  } else if (const Json* e3 = Find(body, "reasoning_effort")) {
    request.thinking_effort = *e3;
  }
  if (const Json* p = Find(*kwargs, "preserve_thinking")) {
    KIMI_RETURN_IF_ERROR(ReadBool(*p, "chat_template_kwargs.preserve_thinking", &request.preserve_thinking));
  } else if (const Json* p2 = Find(body, "preserve_thinking")) {
    KIMI_RETURN_IF_ERROR(ReadBool(*p2, "preserve_thinking", &request.preserve_thinking));
  }
  return request;
}

Result<ChatRequest> ParseChatRequest(std::string_view body_json) {
  const Result<Json> body = ParseUntrustedJson<Json>(body_json, "request body");
  if (!body.ok()) return Status::InvalidArgument(body.status().message());
  return ParseChatRequest(*body);
}

}  // namespace kimi
