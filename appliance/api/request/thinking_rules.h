// The thinking controls of a chat request, resolved once into the three chat-format fields.
//
// Sources, first match wins (the same order ParseChatRequest reads them):
//   thinking:          chat_template_kwargs.thinking (bool) | thinking (bool, or {"type"}) | on
//   thinking_effort:   chat_template_kwargs.thinking_effort (a level or null) | thinking.effort
//                      | thinking_effort | reasoning_effort | "max"
//   preserve_thinking: chat_template_kwargs.preserve_thinking | preserve_thinking | on
// thinking = {"type": "enabled"|"disabled", "keep": "all", "effort": level}: type defaults to
// enabled; with thinking enabled keep must be "all" (K3 keeps every earlier turn's
// reasoning), with it disabled keep is ignored. Levels: low, medium, high, max.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"
#include "api/request/request_validator.h"

namespace kimi::api::request {

// Checks the controls in `body` and records thinking, thinking_effort and preserve_thinking.
Status ResolveThinking(const Json& body, ValidatedRequest* out);

// Replaces the request-level thinking controls of `body` by the resolved chat_template_kwargs
// (other chat_template_kwargs keys are kept).
void WriteThinking(const ValidatedRequest& resolved, Json* body);

}  // namespace kimi::api::request
