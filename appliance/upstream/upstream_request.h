// The request body an upstream OpenAI-compatible server receives, in the dialect vLLM's
// server understands (and `kimi-engine serve` speaks).
//
// From the appliance's validated body it:
//   - resolves the thinking settings (chat_template_kwargs, `thinking`, `reasoning_effort`,
//     ...) exactly as the embedded engine reads them (kimi::ParseChatRequest), and sends them
//     as `chat_template_kwargs` {thinking, thinking_effort, preserve_thinking}, the only form
//     vLLM passes to the K3 template; the appliance-only fields are dropped;
//   - always asks for a stream with usage (`stream: true`, `stream_options.include_usage`), so
//     that the first byte comes early and usage is known, whether the client streams or not;
//   - renames the model when the upstream serves it under another name.
// Everything else (messages, tools, tool_choice, response_format, sampling) passes unchanged.
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::upstream {

// `upstream_model`: the model name to send, "" to keep the body's.
Result<nlohmann::ordered_json> UpstreamChatBody(const nlohmann::ordered_json& body, const std::string& upstream_model);
// A /v1/completions body: no chat template, so only the stream, usage and model parts apply.
Result<nlohmann::ordered_json> UpstreamCompletionBody(const nlohmann::ordered_json& body,
                                                      const std::string& upstream_model);

}  // namespace kimi::upstream
