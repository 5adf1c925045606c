// ForwardBody: the OpenAI request body an upstream server (a `kimi-engine serve` worker or
// vLLM) receives, rendered in one place from the typed request.
//
// Nothing reaches an upstream that the request rules and the policy did not see as the model
// will: the body is built from a list of known fields (sampling, stop, streaming, tool_choice,
// the completions options) taken as the rules accepted them, and what the typed request says
// after the policy step: the rendered texts (messages with the keys and content parts the chat
// format prints, tools, response_format; redacted when the policy rewrites them), the thinking
// settings as chat_template_kwargs {thinking, thinking_effort, preserve_thinking} (the only
// form vLLM passes to the K3 template, and the only kwargs sent), the completions prompt, and
// max_tokens as the request and the policy settled it. Unknown fields, fields for the appliance
// (user, metadata, store, service_tier) and a caller's other template kwargs are not sent. The
// transport's own fields (stream, usage, the upstream's model name, priority) are the upstream
// backend's (upstream/upstream_request.h).
// Public header of api/: other folders include it.
// Thread safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "api/backend.h"

namespace kimi::api {

nlohmann::ordered_json ForwardBody(const BackendRequest& request);

}  // namespace kimi::api
