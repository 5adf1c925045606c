#include "api/request/field_error.h"

#include <cmath>
#include <limits>

#include "kimi/json_integer.h"
#include "kimi/python_text.h"

namespace kimi::api::request {

Status FieldError(std::string_view field, std::string_view problem) {
  std::string message(field);
  message.push_back(' ');
  message.append(problem);
  return Status::InvalidArgument(std::move(message));
}

std::optional<std::string> FieldOfRuleError(const Status& status) {
  if (status.code() != Status::Code::kInvalidArgument) return std::nullopt;
  const std::string& m = status.message();
  const size_t space = m.find(' ');
  if (space == 0 || space == std::string::npos) return std::nullopt;
  // "tools[0].function.parameters: ..." names its field before a colon (Status::WithContext).
  const size_t end = m[space - 1] == ':' ? space - 1 : space;
  if (end == 0) return std::nullopt;
  return m.substr(0, end);
}

std::string Indexed(std::string_view field, size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

std::string Member(std::string_view field, std::string_view key) {
  if (field.empty()) return std::string(key);
  return std::string(field) + "." + std::string(key);
}

const Json* OptionalMember(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Status ExpectObject(const Json& value, std::string_view field) {
  return value.is_object() ? Status::OK() : FieldError(field, "must be an object");
}

Status ExpectArray(const Json& value, std::string_view field) {
  return value.is_array() ? Status::OK() : FieldError(field, "must be an array");
}

Status ExpectString(const Json& value, std::string_view field) {
  return value.is_string() ? Status::OK() : FieldError(field, "must be a string");
}

Status ExpectBool(const Json& value, std::string_view field) {
  return value.is_boolean() ? Status::OK() : FieldError(field, "must be true or false");
}

Status ExpectNumber(const Json& value, std::string_view field, double* out) {
  if (!value.is_number()) return FieldError(field, "must be a number");
  *out = value.get<double>();
  return Status::OK();
}

Status ExpectInteger(const Json& value, std::string_view field, int64_t* out) {
  const std::optional<int64_t> n = JsonInteger(value);
  if (n) {
    *out = *n;
    return Status::OK();
  }
  return FieldError(field, value.is_number_integer() ? "is out of range" : "must be an integer");
}

std::string NumberText(double value) {
  if (std::trunc(value) == value && std::fabs(value) < 1e15) return std::to_string(static_cast<int64_t>(value));
  return chat::PythonFloatRepr(value);
}

}  // namespace kimi::api::request
