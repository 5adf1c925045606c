#include "api/request/response_format_rules.h"

#include "api/request/schema_bounds.h"

namespace kimi::api::request {
namespace {

// OpenAI's rule for json_schema.name: 1..64 of a-z, A-Z, 0-9, '_' and '-'.
bool IsSchemaName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckJsonSchema(const Json& format, ValidatedRequest* out) {
  const Json* spec = OptionalMember(format, "json_schema");
  if (spec == nullptr) return FieldError("response_format.json_schema", "is required when type is \"json_schema\"");
  KIMI_RETURN_IF_ERROR(ExpectObject(*spec, "response_format.json_schema"));
  const Json* name = OptionalMember(*spec, "name");
  if (name == nullptr) return FieldError("response_format.json_schema.name", "is required");
  KIMI_RETURN_IF_ERROR(ExpectString(*name, "response_format.json_schema.name"));
  if (!IsSchemaName(name->get_ref<const std::string&>())) {
    return FieldError("response_format.json_schema.name", "must be 1 to 64 ASCII letters, digits, '_' or '-'");
  }
  const Json* schema = OptionalMember(*spec, "schema");
  if (schema == nullptr) return FieldError("response_format.json_schema.schema", "is required");
  KIMI_RETURN_IF_ERROR(ExpectObject(*schema, "response_format.json_schema.schema"));
  KIMI_RETURN_IF_ERROR(CheckSchemaBounds(*schema, "response_format.json_schema.schema"));
  if (const Json* strict = OptionalMember(*spec, "strict")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*strict, "response_format.json_schema.strict"));
    out->response_schema_strict = strict->get<bool>();
  }
  if (const Json* d = OptionalMember(*spec, "description")) {
    KIMI_RETURN_IF_ERROR(ExpectString(*d, "response_format.json_schema.description"));
  }
  out->response_schema = *schema;
  return Status::OK();
}

}  // namespace

Status CheckResponseFormat(const Json& body, ValidatedRequest* out) {
  out->response_format = "text";
  const Json* format = OptionalMember(body, "response_format");
  if (format == nullptr) return Status::OK();
  KIMI_RETURN_IF_ERROR(ExpectObject(*format, "response_format"));
  const Json* type = OptionalMember(*format, "type");
  if (type == nullptr) return FieldError("response_format.type", "is required");
  if (*type == "json_schema") {
    KIMI_RETURN_IF_ERROR(CheckJsonSchema(*format, out));
  } else if (*type != "text" && *type != "json_object") {
    return FieldError("response_format.type", "must be \"text\", \"json_object\" or \"json_schema\"");
  }
  out->response_format = type->get<std::string>();
  return Status::OK();
}

}  // namespace kimi::api::request
