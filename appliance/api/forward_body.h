// ForwardBody: the OpenAI request body an upstream server (a `kimi-engine serve` worker or
// vLLM) receives, rendered in one place from the typed request.
//
// It starts from the body the request rules accepted and normalised (BackendRequest::
// validated_body: fields the appliance does not interpret, such as n, logit_bias, user or
// metadata, pass as the client sent them) and writes over it what the typed request says and
// the policy step may have changed: the rendered texts (messages, tools, response_format;
// redacted when the policy rewrites them), the thinking settings as chat_template_kwargs
// {thinking, thinking_effort, preserve_thinking} (the only form vLLM passes to the K3
// template), the completions prompt, and max_tokens when the policy set the output cap of a
// request that named none. The transport's own fields (stream, usage, the upstream's model
// name) are the upstream backend's (upstream/upstream_request.h).
// Public header of api/: other folders include it.
// Thread safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "api/backend.h"

namespace kimi::api {

nlohmann::ordered_json ForwardBody(const BackendRequest& request);

}  // namespace kimi::api
