// Shape rules for a chat request's `messages` (pass 1 of the tool rules included): roles,
// content types, assistant tool calls, tool results with their tool_call_id, and dynamic
// tools, which only a system message with empty content may declare.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"

namespace kimi::api::request {

// Checks body["messages"]: a non-empty array of valid messages.
Status CheckMessages(const Json& body);

}  // namespace kimi::api::request
