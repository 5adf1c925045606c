#include "api/request/tool_rules.h"

#include <map>

#include "api/request/schema_bounds.h"
#include "api/request/strict_schema.h"

namespace kimi::api::request {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

Status CheckTool(const Json& tool, const std::string& field) {
  if (tool.is_null()) return FieldError(field, "must be a tool object, not null");
  KIMI_RETURN_IF_ERROR(ExpectObject(tool, field));
  const Json* type = OptionalMember(tool, "type");
  if (type == nullptr) return FieldError(Member(field, "type"), "is required (\"function\")");
  if (*type != "function") return FieldError(Member(field, "type"), "must be \"function\"");
  const std::string function_field = Member(field, "function");
  const Json* function = OptionalMember(tool, "function");
  if (function == nullptr) return FieldError(function_field, "is required");
  KIMI_RETURN_IF_ERROR(ExpectObject(*function, function_field));
  const Json* name = OptionalMember(*function, "name");
  if (name == nullptr) return FieldError(Member(function_field, "name"), "is required");
  KIMI_RETURN_IF_ERROR(CheckToolName(*name, Member(function_field, "name")));
  if (const Json* d = OptionalMember(*function, "description")) {
    KIMI_RETURN_IF_ERROR(ExpectString(*d, Member(function_field, "description")));
  }
  if (const Json* p = OptionalMember(*function, "parameters")) {
    KIMI_RETURN_IF_ERROR(ExpectObject(*p, Member(function_field, "parameters")));
  }
  if (const Json* s = OptionalMember(*function, "strict")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*s, Member(function_field, "strict")));
  }
  return Status::OK();
}

struct NamedTool {
  const Json* tool;
  std::string field;  // where it was declared, for errors
  bool dynamic;
};

// Global tools, then each system message's tools, in request order.
std::vector<NamedTool> AllTools(const Json& body) {
  std::vector<NamedTool> all;
  if (const Json* tools = OptionalMember(body, "tools")) {
    for (size_t i = 0; i < tools->size(); ++i) all.push_back({&(*tools)[i], Indexed("tools", i), false});
  }
  const Json& messages = body["messages"];
  for (size_t m = 0; m < messages.size(); ++m) {
    const Json* tools = OptionalMember(messages[m], "tools");
    if (tools == nullptr) continue;
    const std::string list = Member(Indexed("messages", m), "tools");
    for (size_t i = 0; i < tools->size(); ++i) all.push_back({&(*tools)[i], Indexed(list, i), true});
  }
  return all;
}

}  // namespace

Status CheckToolName(const Json& name, std::string_view field) {
  KIMI_RETURN_IF_ERROR(ExpectString(name, field));
  const std::string& s = name.get_ref<const std::string&>();
  if (s.empty()) return FieldError(field, "must not be empty");
  if (s.size() > kMaxToolNameLength) {
    return FieldError(field, "must be at most " + std::to_string(kMaxToolNameLength) + " characters (got " +
                                 std::to_string(s.size()) + ")");
  }
  if (IsAsciiDigit(s[0])) return FieldError(field, "must not start with a digit");
  for (char c : s) {
    if (c == '@') return FieldError(field, "must not contain '@'");
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c) && c != '_' && c != '-') {
      return FieldError(field, "may contain only ASCII letters, digits, '_' and '-'");
    }
  }
  return Status::OK();
}

Status CheckToolListShape(const Json& tools, std::string_view field) {
  if (!tools.is_array()) return FieldError(field, "must be an array of tools");
  for (size_t i = 0; i < tools.size(); ++i) KIMI_RETURN_IF_ERROR(CheckTool(tools[i], Indexed(field, i)));
  return Status::OK();
}

Status CheckToolChoiceValue(const Json& body) {
  const Json* choice = OptionalMember(body, "tool_choice");
  if (choice == nullptr) return Status::OK();
  if (*choice == "auto" || *choice == "none" || *choice == "required") return Status::OK();
  return FieldError("tool_choice", "must be \"auto\", \"none\" or \"required\"");
}

Status ResolveTools(const Json& body, ValidatedRequest* out) {
  const std::vector<NamedTool> all = AllTools(body);
  if (all.size() > kMaxTools) {
    return FieldError(all[kMaxTools].field, "is one tool too many: a request declares at most " + std::to_string(kMaxTools) +
                                                " tools, global and dynamic together");
  }
  std::map<std::string, std::string, std::less<>> declared_at;
  for (const NamedTool& t : all) {
    const std::string& name = (*t.tool)["function"]["name"].get_ref<const std::string&>();
    auto [it, inserted] = declared_at.emplace(name, t.field);
    if (!inserted) {
      return FieldError(Member(Member(t.field, "function"), "name"),
                        "repeats the tool name \"" + name + "\" already declared at " + it->second);
    }
  }

  const Json* choice = OptionalMember(body, "tool_choice");
  if (choice != nullptr) {
    out->tool_choice = choice->get<std::string>();
  } else {
    out->tool_choice = all.empty() ? "none" : "auto";
  }
  if (out->tool_choice == "required" && all.empty()) {
    return FieldError("tool_choice", "is \"required\" but the request declares no tools");
  }

  out->tools.clear();
  for (const NamedTool& t : all) {
    const Json& function = (*t.tool)["function"];
    DeclaredTool tool;
    tool.name = function["name"].get<std::string>();
    tool.dynamic = t.dynamic;
    const Json* strict = OptionalMember(function, "strict");
    tool.strict = strict != nullptr && strict->get<bool>();
    if (const Json* parameters = OptionalMember(function, "parameters")) {
      KIMI_RETURN_IF_ERROR(CheckSchemaBounds(*parameters, Member(Member(t.field, "function"), "parameters")));
      tool.parameters_normalised = tool.strict || out->tool_choice == "auto";
      tool.parameters = tool.parameters_normalised ? NormaliseStrictSchema(*parameters) : *parameters;
    }
    out->tools.push_back(std::move(tool));
  }
  return Status::OK();
}

}  // namespace kimi::api::request
