#include "upstream/upstream_request.h"

#include "kimi/chat_format.h"

namespace kimi::upstream {

using Json = nlohmann::ordered_json;

namespace {

void AskForStreamWithUsage(const Json& body, const std::string& upstream_model, Json* out) {
  (*out)["stream"] = true;
  Json stream_options = body.contains("stream_options") && body["stream_options"].is_object()
                            ? body["stream_options"]
                            : Json::object();
  stream_options["include_usage"] = true;
  (*out)["stream_options"] = std::move(stream_options);
  if (!upstream_model.empty()) (*out)["model"] = upstream_model;
}

}  // namespace

Result<Json> UpstreamChatBody(const Json& body, const std::string& upstream_model) {
  if (!body.is_object()) return Status::InvalidArgument("request body: must be a JSON object");
  // The API's `thinking` object says effort and keep inside it; ParseChatRequest reads the
  // flat forms, so they are lifted first (an explicit flat or kwargs value still wins there).
  Json resolved_from = body;
  if (auto thinking = body.find("thinking"); thinking != body.end() && thinking->is_object()) {
    if (auto effort = thinking->find("effort"); effort != thinking->end() && !body.contains("thinking_effort")) {
      resolved_from["thinking_effort"] = *effort;
    }
    if (auto keep = thinking->find("keep"); keep != thinking->end() && !body.contains("preserve_thinking")) {
      resolved_from["preserve_thinking"] = keep->is_string() && keep->get<std::string>() == "all";
    }
  }
  KIMI_ASSIGN_OR_RETURN(ChatRequest settings, ParseChatRequest(resolved_from));

  Json out = body;
  for (const char* appliance_only : {"thinking", "thinking_effort", "preserve_thinking", "reasoning_effort"}) {
    out.erase(appliance_only);
  }
  Json kwargs = body.contains("chat_template_kwargs") && body["chat_template_kwargs"].is_object()
                    ? body["chat_template_kwargs"]
                    : Json::object();
  kwargs["thinking"] = settings.thinking;
  kwargs["thinking_effort"] = settings.thinking_effort;
  kwargs["preserve_thinking"] = settings.preserve_thinking;
  out["chat_template_kwargs"] = std::move(kwargs);
  AskForStreamWithUsage(body, upstream_model, &out);
  return out;
}

Result<Json> UpstreamCompletionBody(const Json& body, const std::string& upstream_model) {
  if (!body.is_object()) return Status::InvalidArgument("request body: must be a JSON object");
  Json out = body;
  AskForStreamWithUsage(body, upstream_model, &out);
  return out;
}

}  // namespace kimi::upstream
