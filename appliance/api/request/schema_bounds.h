// The bounds every JSON Schema in a request keeps (response_format.json_schema.schema and each
// tool's function.parameters), whatever backend the request goes to: size, nesting, enum
// values, pattern length, and no $ref/allOf/anyOf/oneOf cycle that consumes no input
// (docs/structured-output.md, "Limits"). The embedded engine applies the same check, from the
// same code, before it compiles a schema, and compiles within a state, step and time budget.
//
// Owns nothing. Thread safety: pure function.
#pragma once

#include <string_view>

#include "api/request/field_error.h"

namespace kimi::api::request {

// Errors: FieldError naming `field` ("tools[0].function.parameters"), saying which bound.
Status CheckSchemaBounds(const Json& schema, std::string_view field);

}  // namespace kimi::api::request
