// The gate every API request body passes before it reaches a backend, and the few fields
// the HTTP layer itself reads (stream, stream_options.include_usage, the thinking mode).
//
// PrepareRequest() is the single call site for request validation and normalisation. It
// checks only what the handlers rely on (a JSON object; messages an array for chat, a prompt
// for completions; model a string when present); the full request rules of the API
// (appliance/api/request/) plug in here.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "api/request/model_request_rules.h"
#include "kimi/status.h"

namespace kimi::api {

// Errors: InvalidArgument naming the field. May normalise *body. `rules`: the bounds of the
// model the request is for (ModelRulesTable::For), K3's by default.
Status PrepareRequest(Endpoint endpoint, nlohmann::ordered_json* body,
                      const ModelRequestRules& rules = ModelRequestRules::K3());

struct ResponseMode {
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool thinking = true;        // as the chat format reads the body (K3 default: on)
  bool logprobs = false;       // `logprobs: true` (chat) or an integer (completions)
};
// Request bodies PrepareRequest() has parsed since the process started (every call counts,
// refused bodies too), for /metrics: one per API request.
uint64_t RequestParses();

// Precondition: PrepareRequest() accepted `body`.
ResponseMode ReadResponseMode(Endpoint endpoint, const nlohmann::ordered_json& body);

}  // namespace kimi::api
