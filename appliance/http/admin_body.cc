#include "http/admin_body.h"

#include "auth/authenticator.h"
#include "auth/password.h"
#include "kimi/json_integer.h"

namespace kimi::http {

using nlohmann::json;

Result<json> ParseBody(std::string_view text, const std::set<std::string>& allowed, const std::set<std::string>& arrays,
                       const std::set<std::string>& integers, std::optional<std::string>* bad_field) {
  json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (bad_field != nullptr) *bad_field = key;
    if (!allowed.count(key)) return Status::InvalidArgument("unknown field '" + key + "'");
    if (integers.count(key)) {
      // An integer within int64: 2^63 read as int64 unchecked wrapped to a negative number.
      if (!value.is_number_integer() || !JsonInteger(value)) {
        return Status::InvalidArgument("field '" + key + "' must be an integer in [-2^63, 2^63)");
      }
      continue;
    }
    bool ok = arrays.count(key) ? value.is_array() : value.is_string();
    if (ok && value.is_array()) {
      for (const auto& v : value) ok = ok && v.is_string();
    }
    if (!ok) return Status::InvalidArgument("field '" + key + (arrays.count(key) ? "' must be an array of strings" : "' must be a string"));
  }
  if (bad_field != nullptr) bad_field->reset();
  return body;
}

std::string Field(const json& body, const char* key) { return body.contains(key) ? body[key].get<std::string>() : ""; }

Result<std::string> Required(const json& body, const char* key) {
  std::string v = Field(body, key);
  if (v.empty()) return Status::InvalidArgument("field '" + std::string(key) + "' is required");
  return v;
}

Result<std::string> CheckedUsername(const json& body, std::optional<std::string>* bad_field) {
  if (bad_field != nullptr) *bad_field = "username";
  KIMI_ASSIGN_OR_RETURN(std::string username, Required(body, "username"));
  KIMI_RETURN_IF_ERROR(auth::CheckUsername(username));
  if (bad_field != nullptr) bad_field->reset();
  return username;
}

Result<std::string> CheckedPassword(const json& body, const char* key, std::optional<std::string>* bad_field) {
  if (bad_field != nullptr) *bad_field = key;
  KIMI_ASSIGN_OR_RETURN(std::string password, Required(body, key));
  KIMI_RETURN_IF_ERROR(auth::CheckPasswordLength(key, password));
  if (bad_field != nullptr) bad_field->reset();
  return password;
}

Result<LoginBody> ParseLoginBody(std::string_view text, std::optional<std::string>* bad_field) {
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(text, {"username", "password"}, {}, {}, bad_field));
  LoginBody login;
  KIMI_ASSIGN_OR_RETURN(login.username, CheckedUsername(body, bad_field));
  KIMI_ASSIGN_OR_RETURN(login.password, CheckedPassword(body, "password", bad_field));
  return login;
}

}  // namespace kimi::http
