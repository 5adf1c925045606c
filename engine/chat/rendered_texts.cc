// ForEachRenderedText: the request fields whose text the K3 chat format writes into the prompt.
//
// Kept beside the renderer (chat_format.cc) because the two must agree: rendered_texts_test.cc
// marks every string of every golden request in turn, renders it, and requires that whenever
// the mark reaches the prompt, this walk hands over a text containing it. A field the renderer
// starts writing without this walk visiting it fails that test.
#include <string>
#include <utility>
#include <vector>

#include "kimi/chat_format.h"

#include "kimi/python_text.h"

namespace kimi {
namespace {

using chat::Json;

Json* Find(Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// One scalar as the prompt prints it: a string as is, a number as Python's str() prints it.
// Booleans and null print True/False/None, which hold nothing a policy looks for.
void VisitScalar(Json* value, const RenderedTextVisitor& visit) {
  if (value->is_string()) {
    visit(&value->get_ref<std::string&>());
  } else if (value->is_number()) {
    const std::string printed = chat::PythonStr(*value);
    std::string text = printed;
    visit(&text);
    if (text != printed) *value = std::move(text);
  }
}

// Every key and scalar of a value the renderer prints whole (tool declarations, schemas,
// Python's str() of a container).
void VisitTree(Json* value, const RenderedTextVisitor& visit) {
  if (value->is_array()) {
    for (Json& element : *value) VisitTree(&element, visit);
    return;
  }
  if (!value->is_object()) {
    VisitScalar(value, visit);
    return;
  }
  std::vector<std::string> names;
  names.reserve(value->size());
  bool renamed = false;
  for (auto& [key, member] : value->items()) {
    names.push_back(key);
    visit(&names.back());
    renamed |= names.back() != key;
    VisitTree(&member, visit);
  }
  if (!renamed) return;  // the common case: nothing to rebuild
  // A key the visitor rewrote cannot be renamed in place: the object is rebuilt in its order.
  Json rebuilt = Json::object();
  size_t i = 0;
  for (auto& [key, member] : value->items()) rebuilt[names[i++]] = std::move(member);
  *value = std::move(rebuilt);
}

// A tool call's arguments: a JSON object text renders as its keys and values (decoded, so a
// value spelled with \u escapes is seen as the prompt shows it); any other text renders raw.
void VisitArguments(Json* arguments, const RenderedTextVisitor& visit) {
  if (!arguments->is_string()) {
    VisitTree(arguments, visit);
    return;
  }
  std::string& text = arguments->get_ref<std::string&>();
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || !chat::NestingWithin(parsed, chat::kMaxNesting)) {
    visit(&text);
    return;
  }
  const Json before = parsed;
  VisitTree(&parsed, visit);
  if (parsed != before) text = parsed.dump();
}

void VisitContent(Json* content, const RenderedTextVisitor& visit) {
  if (content->is_string()) {
    visit(&content->get_ref<std::string&>());
    return;
  }
  if (!content->is_array()) return;  // null and mappings print nothing
  for (Json& part : *content) {
    if (Json* text = Find(part, "text")) VisitTree(text, visit);
  }
}

void VisitMessage(Json* message, const RenderedTextVisitor& visit) {
  if (!message->is_object()) return;
  if (Json* content = Find(*message, "content")) VisitContent(content, visit);
  // The ids are not in K3's prompt, but an upstream's template may print them (K2's prints a
  // call's id and a tool result's tool_call_id), and the upstream receives them either way.
  for (const char* printed : {"name", "reasoning_content", "reasoning", "tool", "tools", "id", "tool_call_id"}) {
    if (Json* value = Find(*message, printed)) VisitTree(value, visit);
  }
  Json* calls = Find(*message, "tool_calls");
  if (calls == nullptr || !calls->is_array()) return;
  for (Json& call : *calls) {
    for (const char* forwarded : {"id", "type"}) {
      if (Json* value = Find(call, forwarded)) VisitTree(value, visit);
    }
    Json* function = Find(call, "function");
    Json& fn = (function != nullptr && function->is_object()) ? *function : call;
    if (Json* name = Find(fn, "name")) VisitTree(name, visit);
    if (Json* arguments = Find(fn, "arguments")) VisitArguments(arguments, visit);
  }
}

Status WithinNesting(const Json& value, const std::string& field) {
  if (chat::NestingWithin(value, chat::kMaxNesting)) return Status::OK();
  return Status::InvalidArgument(field + ": nested deeper than " + std::to_string(chat::kMaxNesting) + " levels");
}

}  // namespace

Status ForEachText(nlohmann::ordered_json* value, const RenderedTextVisitor& visit) {
  KIMI_RETURN_IF_ERROR(WithinNesting(*value, "value"));
  VisitTree(value, visit);
  return Status::OK();
}

Status ForEachRenderedText(ChatRequest* request, const RenderedTextVisitor& visit) {
  // The walk recurses like the renderer, which refuses deeper requests the same way.
  KIMI_RETURN_IF_ERROR(WithinNesting(request->messages, "messages"));
  KIMI_RETURN_IF_ERROR(WithinNesting(request->tools, "tools"));
  KIMI_RETURN_IF_ERROR(WithinNesting(request->response_format, "response_format"));
  if (request->messages.is_array()) {
    for (Json& message : request->messages) VisitMessage(&message, visit);
  }
  VisitTree(&request->tools, visit);
  // A named tool choice repeats a tool's name; rewritten alike, the two still match.
  if (request->has_tool_choice) VisitTree(&request->tool_choice, visit);
  if (request->has_response_format) VisitTree(&request->response_format, visit);
  return Status::OK();
}

}  // namespace kimi
