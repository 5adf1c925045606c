// response_format: {"type": "text"}, {"type": "json_object"} or {"type": "json_schema",
// "json_schema": {"name", "schema", "strict"?, "description"?}}.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"
#include "api/request/request_validator.h"

namespace kimi::api::request {

// Checks body["response_format"] (absent or null: text) and records its type and schema.
Status CheckResponseFormat(const Json& body, ValidatedRequest* out);

}  // namespace kimi::api::request
