// Shape rules for a chat request's `messages` (pass 1 of the tool rules included): roles,
// content types, assistant tool calls, tool results with their tool_call_id, and dynamic
// tools, which only a system message with empty content may declare; `developer` messages
// become `system` messages (WriteSystemRoles).
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"

namespace kimi::api::request {

// Rewrites the role of every `developer` message of body["messages"] to `system`: OpenAI's
// developer role is the system role of its newer models, and K3 (its template, the embedded
// renderer, an upstream vLLM) knows only `system`. Runs before the other rules, so that a
// developer message is checked, scanned by the policy, rendered and forwarded as the system
// message it becomes. Anything that is not an array of objects is left for CheckMessages.
void WriteSystemRoles(Json* body);

// Checks body["messages"]: a non-empty array of valid messages.
Status CheckMessages(const Json& body);

}  // namespace kimi::api::request
