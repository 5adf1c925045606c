// Tool declarations, global (`tools`) and dynamic (`tools` in a system message whose content
// is empty), and tool_choice, validated in two passes.
//
// Pass 1 (CheckToolListShape, CheckToolChoiceValue) looks at one list or field at a time:
// the list is an array of objects, each {"type": "function", "function": {"name", ...}} with a
// valid name, and tool_choice is "auto", "none" or "required". Pass 2 (ResolveTools) sees the
// whole request: tool names are unique across the global list and every dynamic list,
// "required" needs at least one tool, at most kMaxTools are declared in all, each tool's
// parameter schema keeps the schema bounds (schema_bounds.h) and is put in strict form when
// the tool is strict or the effective tool_choice is auto. A request without dynamic
// tools takes the same path with an empty dynamic part, so adding them changes nothing else.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <string_view>

#include "api/request/field_error.h"
#include "api/request/request_validator.h"
#include "kimi/structured_output.h"

namespace kimi::api::request {

inline constexpr size_t kMaxToolNameLength = 256;
// OpenAI's bound on `tools`; the engine's constrained decoding takes no more.
inline constexpr size_t kMaxTools = kimi::kMaxStrictTools;

// A tool name: 1..256 characters, ASCII letters, digits, '_' and '-', not starting with a
// digit. `field` names the value in the error.
Status CheckToolName(const Json& name, std::string_view field);

// Pass 1 for one list: `tools` is the value of the field at `field` ("tools",
// "messages[3].tools").
Status CheckToolListShape(const Json& tools, std::string_view field);

// Pass 1 for tool_choice (absent and null are allowed).
Status CheckToolChoiceValue(const Json& body);

// Pass 2: duplicates, tool_choice against the declared tools, schema normalisation. Expects
// pass 1 to have passed for the body's `tools`, every message's `tools` and tool_choice.
// Fills out->tools and out->tool_choice.
Status ResolveTools(const Json& body, ValidatedRequest* out);

}  // namespace kimi::api::request
