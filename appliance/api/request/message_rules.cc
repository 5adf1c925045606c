#include "api/request/message_rules.h"

#include <algorithm>

#include "api/request/tool_rules.h"

namespace kimi::api::request {
namespace {

bool IsKnownRole(const std::string& role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" || role == "tool";
}

// A caller's short name as 'name' for a message; anything longer or not printable ASCII as
// "another type", so that an error does not carry back megabytes or control bytes.
std::string QuotedIfShortAscii(const std::string& name) {
  constexpr size_t kMaxQuoted = 64;
  const bool plain = name.size() <= kMaxQuoted &&
                     std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  return plain ? "'" + name + "'" : "another type";
}

// Text, or an array of content parts ({"type": "text", "text": ...} or another typed part).
Status CheckContent(const Json& content, const std::string& field) {
  if (content.is_string()) return Status::OK();
  if (!content.is_array()) return FieldError(field, "must be a string or an array of content parts");
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part = Indexed(field, i);
    KIMI_RETURN_IF_ERROR(ExpectObject(content[i], part));
    const Json* type = OptionalMember(content[i], "type");
    if (type == nullptr) return FieldError(Member(part, "type"), "is required");
    KIMI_RETURN_IF_ERROR(ExpectString(*type, Member(part, "type")));
    if (*type != "image_url" && *type != "image") {
      // The chat format prints a part's `text` whatever its type (an `input_text` part reads as
      // text) and nothing else of it: a part without text (audio, a file, a refusal) would reach
      // the model as nothing, answered as if it had been read.
      const Json* text = OptionalMember(content[i], "text");
      if (text == nullptr && *type == "text") return FieldError(Member(part, "text"), "is required in a text part");
      if (text == nullptr) {
        return FieldError(Member(part, "type"), "is " + QuotedIfShortAscii(type->get_ref<const std::string&>()) +
                                                    ", a part this model cannot read: it reads text parts and "
                                                    "images (image_url)");
      }
      KIMI_RETURN_IF_ERROR(ExpectString(*text, Member(part, "text")));
    } else {
      // An upstream server fetches a URL it is given: only an inline image (a data: URL of an
      // image type) may pass, so no request makes anything inside the network connect anywhere,
      // and no text rides in a part the policy does not read (a data:text/plain URL).
      const std::string& kind = type->get_ref<const std::string&>();
      const Json* image = OptionalMember(content[i], kind);
      const Json* url = image == nullptr ? nullptr : image->is_object() ? OptionalMember(*image, "url") : image;
      // An `image` part may hold its URL itself; an image_url part's is named image_url.url
      // whatever its form, as OpenAI's schema names it.
      const bool bare = kind == "image" && image != nullptr && !image->is_object();
      const std::string url_field = bare ? Member(part, kind) : Member(Member(part, kind), "url");
      if (url == nullptr) return FieldError(url_field, "is required in an " + kind + " part");
      KIMI_RETURN_IF_ERROR(ExpectString(*url, url_field));
      const std::string& text = url->get_ref<const std::string&>();
      if (text.rfind("data:", 0) != 0) {
        return FieldError(url_field, "must be a data: URL (the appliance fetches nothing)");
      }
      const size_t comma = text.find(',');
      const std::string_view header = std::string_view(text).substr(0, comma);
      if (header.rfind("data:image/", 0) != 0 || comma == std::string::npos ||
          header.size() < 7 || header.substr(header.size() - 7) != ";base64") {
        return FieldError(url_field, "must be a base64 data: URL of an image (data:image/...;base64,...)");
      }
    }
  }
  return Status::OK();
}

bool IsEmptyContent(const Json* content) {
  if (content == nullptr) return true;
  if (content->is_string()) return content->get_ref<const std::string&>().empty();
  return content->is_array() && content->empty();
}

Status CheckToolCalls(const Json& calls, const std::string& field) {
  KIMI_RETURN_IF_ERROR(ExpectArray(calls, field));
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string call = Indexed(field, i);
    KIMI_RETURN_IF_ERROR(ExpectObject(calls[i], call));
    if (const Json* id = OptionalMember(calls[i], "id")) KIMI_RETURN_IF_ERROR(ExpectString(*id, Member(call, "id")));
    if (const Json* type = OptionalMember(calls[i], "type"); type != nullptr && *type != "function") {
      return FieldError(Member(call, "type"), "must be \"function\"");
    }
    const std::string function_field = Member(call, "function");
    const Json* function = OptionalMember(calls[i], "function");
    if (function == nullptr) return FieldError(function_field, "is required");
    KIMI_RETURN_IF_ERROR(ExpectObject(*function, function_field));
    const Json* name = OptionalMember(*function, "name");
    if (name == nullptr) return FieldError(Member(function_field, "name"), "is required");
    KIMI_RETURN_IF_ERROR(ExpectString(*name, Member(function_field, "name")));
    if (name->get_ref<const std::string&>().empty()) return FieldError(Member(function_field, "name"), "must not be empty");
    const Json* arguments = OptionalMember(*function, "arguments");
    if (arguments != nullptr && !arguments->is_string() && !arguments->is_object()) {
      return FieldError(Member(function_field, "arguments"), "must be a JSON text or an object");
    }
  }
  return Status::OK();
}

Status CheckMessage(const Json& message, size_t index) {
  const std::string field = Indexed("messages", index);
  KIMI_RETURN_IF_ERROR(ExpectObject(message, field));
  const Json* role_value = OptionalMember(message, "role");
  if (role_value == nullptr) return FieldError(Member(field, "role"), "is required");
  KIMI_RETURN_IF_ERROR(ExpectString(*role_value, Member(field, "role")));
  const std::string& role = role_value->get_ref<const std::string&>();
  if (!IsKnownRole(role)) {
    return FieldError(Member(field, "role"), "must be one of system, developer, user, assistant, tool");
  }

  const Json* content = OptionalMember(message, "content");
  if (content != nullptr) KIMI_RETURN_IF_ERROR(CheckContent(*content, Member(field, "content")));
  if (content == nullptr && (role == "user" || role == "tool")) {
    return FieldError(Member(field, "content"), "is required in a " + role + " message");
  }
  if (const Json* name = OptionalMember(message, "name")) KIMI_RETURN_IF_ERROR(ExpectString(*name, Member(field, "name")));

  if (const Json* tools = OptionalMember(message, "tools")) {
    if (role != "system") return FieldError(Member(field, "tools"), "is allowed only in a system message");
    KIMI_RETURN_IF_ERROR(CheckToolListShape(*tools, Member(field, "tools")));
    if (!tools->empty() && !IsEmptyContent(content)) {
      return FieldError(Member(field, "content"), "must be empty in a system message that declares tools");
    }
  }
  if (role == "tool") {
    const Json* id = OptionalMember(message, "tool_call_id");
    if (id == nullptr) return FieldError(Member(field, "tool_call_id"), "is required in a tool message");
    KIMI_RETURN_IF_ERROR(ExpectString(*id, Member(field, "tool_call_id")));
    if (id->get_ref<const std::string&>().empty()) return FieldError(Member(field, "tool_call_id"), "must not be empty");
  }
  if (role == "assistant") {
    if (const Json* calls = OptionalMember(message, "tool_calls")) {
      KIMI_RETURN_IF_ERROR(CheckToolCalls(*calls, Member(field, "tool_calls")));
    }
    if (const Json* r = OptionalMember(message, "reasoning_content")) {
      KIMI_RETURN_IF_ERROR(ExpectString(*r, Member(field, "reasoning_content")));
    }
  }
  return Status::OK();
}

}  // namespace

void WriteSystemRoles(Json* body) {
  if (!body->is_object()) return;
  auto messages = body->find("messages");
  if (messages == body->end() || !messages->is_array()) return;
  for (Json& message : *messages) {
    if (!message.is_object()) continue;
    auto role = message.find("role");
    if (role != message.end() && *role == "developer") *role = "system";
  }
}

Status CheckMessages(const Json& body) {
  const Json* messages = OptionalMember(body, "messages");
  if (messages == nullptr) return FieldError("messages", "is required");
  KIMI_RETURN_IF_ERROR(ExpectArray(*messages, "messages"));
  if (messages->empty()) return FieldError("messages", "must contain at least one message");
  for (size_t i = 0; i < messages->size(); ++i) KIMI_RETURN_IF_ERROR(CheckMessage((*messages)[i], i));
  return Status::OK();
}

}  // namespace kimi::api::request
