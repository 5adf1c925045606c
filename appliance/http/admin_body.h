// The JSON bodies of the admin routes (/admin/v1/...): a flat object of known string fields
// (some arrays of strings or integers), read strictly, and the sign-in body of
// POST /admin/v1/session in particular. Kept apart from the handlers so the parse of an
// unauthenticated body can be tested and fuzzed without a server (tests/fuzz/).
// Public header of http/: other folders include it.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::http {

// `body` as a JSON object whose keys are all in `allowed` and whose values are strings,
// except the keys in `arrays` (arrays of strings) and `integers`. When a field is at fault and
// `bad_field` is given, it gets the field's name (OpenAI's error `param`).
Result<nlohmann::json> ParseBody(std::string_view body, const std::set<std::string>& allowed,
                                 const std::set<std::string>& arrays = {}, const std::set<std::string>& integers = {},
                                 std::optional<std::string>* bad_field = nullptr);

// The string field `key` of a body ParseBody() accepted; "" when absent.
std::string Field(const nlohmann::json& body, const char* key);
// The same, InvalidArgument naming the field when absent or empty.
Result<std::string> Required(const nlohmann::json& body, const char* key);

// The required "username" of a body, a valid user name (auth::CheckUsername), and the required
// password field `key`, at most auth::kMaxPasswordBytes; `bad_field` as for ParseBody().
Result<std::string> CheckedUsername(const nlohmann::json& body, std::optional<std::string>* bad_field = nullptr);
Result<std::string> CheckedPassword(const nlohmann::json& body, const char* key,
                                    std::optional<std::string>* bad_field = nullptr);

struct LoginBody {
  std::string username;
  std::string password;
};
// POST /admin/v1/session: {"username", "password"}, both required and checked as above.
Result<LoginBody> ParseLoginBody(std::string_view body, std::optional<std::string>* bad_field = nullptr);

}  // namespace kimi::http
