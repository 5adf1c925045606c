#include "api/request/thinking_rules.h"

namespace kimi::api::request {
namespace {

bool IsEffortLevel(const Json& value) {
  if (!value.is_string()) return false;
  const auto& s = value.get_ref<const std::string&>();
  return s == "low" || s == "medium" || s == "high" || s == "max";
}

Status CheckEffort(const Json& value, std::string_view field) {
  if (IsEffortLevel(value)) return Status::OK();
  return FieldError(field, "must be one of low, medium, high, max");
}

// The `thinking` object (or boolean). Sets *enabled, and *effort when it names one.
Status ReadThinkingField(const Json& thinking, bool* enabled, const Json** effort) {
  if (thinking.is_boolean()) {
    *enabled = thinking.get<bool>();
    return Status::OK();
  }
  if (!thinking.is_object()) return FieldError("thinking", R"(must be an object {"type": "enabled"|"disabled", ...})");
  if (const Json* type = OptionalMember(thinking, "type")) {
    if (!type->is_string() || (*type != "enabled" && *type != "disabled")) {
      return FieldError("thinking.type", "must be \"enabled\" or \"disabled\"");
    }
    *enabled = *type == "enabled";
  }
  if (const Json* e = OptionalMember(thinking, "effort")) {
    KIMI_RETURN_IF_ERROR(CheckEffort(*e, "thinking.effort"));
    *effort = e;
  }
  const Json* keep = OptionalMember(thinking, "keep");
  if (keep != nullptr && *enabled && *keep != "all") {
    return FieldError("thinking.keep", "must be \"all\" (the only mode this model supports)");
  }
  return Status::OK();
}

}  // namespace

Status ResolveThinking(const Json& body, ValidatedRequest* out) {
  static const Json kNoKwargs = Json::object();
  const Json* kwargs = OptionalMember(body, "chat_template_kwargs");
  if (kwargs != nullptr) KIMI_RETURN_IF_ERROR(ExpectObject(*kwargs, "chat_template_kwargs"));
  if (kwargs == nullptr) kwargs = &kNoKwargs;

  bool thinking = true;
  const Json* thinking_effort = nullptr;  // thinking.effort
  if (const Json* t = OptionalMember(body, "thinking")) {
    KIMI_RETURN_IF_ERROR(ReadThinkingField(*t, &thinking, &thinking_effort));
  }
  if (const Json* t = OptionalMember(*kwargs, "thinking")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*t, "chat_template_kwargs.thinking"));
    thinking = t->get<bool>();
  }
  out->thinking = thinking;

  // Each lower source is checked even when a higher one wins: a bad value is a bad request.
  const Json* top_effort = OptionalMember(body, "thinking_effort");
  if (top_effort != nullptr) KIMI_RETURN_IF_ERROR(CheckEffort(*top_effort, "thinking_effort"));
  const Json* reasoning_effort = OptionalMember(body, "reasoning_effort");
  if (reasoning_effort != nullptr) KIMI_RETURN_IF_ERROR(CheckEffort(*reasoning_effort, "reasoning_effort"));
  out->thinking_effort = "max";
  if (kwargs->contains("thinking_effort")) {
    const Json& e = (*kwargs)["thinking_effort"];
    if (e.is_null()) {
      out->thinking_effort.reset();  // vLLM clients may ask for no effort line at all
    } else {
      KIMI_RETURN_IF_ERROR(CheckEffort(e, "chat_template_kwargs.thinking_effort"));
      out->thinking_effort = e.get<std::string>();
    }
  } else if (thinking_effort != nullptr) {
    out->thinking_effort = thinking_effort->get<std::string>();
  } else if (top_effort != nullptr) {
    out->thinking_effort = top_effort->get<std::string>();
  } else if (reasoning_effort != nullptr) {
    out->thinking_effort = reasoning_effort->get<std::string>();
  }

  out->preserve_thinking = true;
  if (const Json* p = OptionalMember(body, "preserve_thinking")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*p, "preserve_thinking"));
    out->preserve_thinking = p->get<bool>();
  }
  if (const Json* p = OptionalMember(*kwargs, "preserve_thinking")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*p, "chat_template_kwargs.preserve_thinking"));
    out->preserve_thinking = p->get<bool>();
  }
  return Status::OK();
}

void WriteThinking(const ValidatedRequest& resolved, Json* body) {
  for (const char* key : {"thinking", "reasoning_effort", "thinking_effort", "preserve_thinking"}) body->erase(key);
  Json& kwargs = (*body)["chat_template_kwargs"];
  if (!kwargs.is_object()) kwargs = Json::object();
  kwargs["thinking"] = resolved.thinking;
  kwargs["thinking_effort"] = resolved.thinking_effort ? Json(*resolved.thinking_effort) : Json(nullptr);
  kwargs["preserve_thinking"] = resolved.preserve_thinking;
}

}  // namespace kimi::api::request
