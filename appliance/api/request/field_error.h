// Field errors of request validation, and the JSON type checks every rule module shares.
//
// Every request-rule failure is a Status::InvalidArgument whose message starts with the path
// of the request field at fault, followed by a space: "temperature must be in [0, 1] (got
// 1.1)", "messages[2].tools[0].function.name must not start with a digit". The HTTP layer
// answers it as a 400, and FieldOfRuleError() recovers the path for OpenAI's `param`.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::api::request {

using Json = nlohmann::ordered_json;

// Whether `key` is one of `names` (the field lists of the rules and of the forwarded body).
template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view key) {
  for (std::string_view name : names) {
    if (name == key) return true;
  }
  return false;
}

// InvalidArgument("<field> <problem>").
Status FieldError(std::string_view field, std::string_view problem);

// The field path a request-rule error names (the message up to its first space), or nullopt
// for any other Status.
std::optional<std::string> FieldOfRuleError(const Status& status);

// "messages[3]", "tools[0].function" ...
std::string Indexed(std::string_view field, size_t index);
std::string Member(std::string_view field, std::string_view key);

// The member `key` of `object`, or nullptr when absent. JSON null counts as absent for
// optional request fields, as OpenAI's own API treats it.
const Json* OptionalMember(const Json& object, std::string_view key);

// Type checks: each returns FieldError naming `field` when `value` has the wrong JSON type.
Status ExpectObject(const Json& value, std::string_view field);
Status ExpectArray(const Json& value, std::string_view field);
Status ExpectString(const Json& value, std::string_view field);
Status ExpectBool(const Json& value, std::string_view field);
// A number (not a boolean). Writes its value.
Status ExpectNumber(const Json& value, std::string_view field, double* out);
// An integer; 3.0 is accepted as 3 because some clients serialise every number as a float.
Status ExpectInteger(const Json& value, std::string_view field, int64_t* out);

// A number for messages: integral values without a fraction (0, 2), others as Python's
// repr writes them (1.1, -0.1).
std::string NumberText(double value);

}  // namespace kimi::api::request
