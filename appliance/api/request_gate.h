// The gate every API request body passes before it reaches the policy and a backend: the one
// place in the appliance where OpenAI's request JSON is read.
//
// ParseRequest() parses the body text, applies the request rules of the model it names
// (appliance/api/request/, docs/api.md "Request rules"; they read the generation fields with
// kimi::ReadGenerationParams) and completes the engine's typed request once from the
// normalised body (kimi::ReadPromptFields). Both readers are the ones the `kimi-engine serve`
// worker reads its requests with (kimi::ReadServingRequest), so the two agree by
// construction. Everything after it reads the typed ApiRequest: the
// policy step, the HTTP layer's response mode, the backends. The normalised body stays in the
// request only for forwarding to an upstream server (api/forward_body.h).
// Public header of api/: other folders include it.
// Thread safety: pure functions; RequestParses() reads an atomic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "api/request/request_validator.h"
#include "config/model_request_rules.h"
#include "kimi/serving_request.h"
#include "kimi/status.h"

namespace kimi::api {

// One API request as the appliance holds it from the edge on.
struct ApiRequest {
  // The protocol values the request rules read (stream, stream_options, the model, limits,
  // tool schemas, ignored fields); its `body` is the normalised body, read only to forward it.
  ValidatedRequest validated;
  // The engine's typed request, what the policy applies to and the embedded engine runs.
  ServingRequest serving;
};

// The request rules of the model a body names, or of `served` when it names none.
using RulesLookup = std::function<const ModelRequestRules&(const std::string& model)>;

// Errors: InvalidArgument naming the field ("the request body is not valid JSON" for text
// that does not parse). `rules` may be null: K3's rules for every model.
Result<ApiRequest> ParseRequest(Endpoint endpoint, std::string_view body_text, const RulesLookup& rules,
                                const std::string& served);
// The same over an already parsed body (tests, fuzz targets).
Result<ApiRequest> ParseRequest(Endpoint endpoint, const nlohmann::ordered_json& body,
                                const ModelRequestRules& rules = ModelRequestRules::K3());

// Request bodies ParseRequest() has read since the process started (refused ones too), for
// /metrics: one per API request.
uint64_t RequestParses();

struct ResponseMode {
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool thinking = true;        // as the chat format reads the request (K3 default: on)
  bool logprobs = false;       // `logprobs: true` (chat) or an integer (completions)
};
ResponseMode ReadResponseMode(const ApiRequest& request);

// The backend request of an API request, after the policy step: the typed request, the
// normalised body kept for forwarding, and what the step decided (`prompt`: its rendering,
// may be null).
BackendRequest ToBackendRequest(ApiRequest request, std::string request_id, std::string model,
                                std::string workload_class = {}, int priority = 0,
                                std::shared_ptr<const EncodedRequestPrompt> prompt = nullptr);

// "a, b": the request's ignored top-level fields, for the one log line that names them
// (empty when there are none).
std::string IgnoredFieldList(const ApiRequest& request);

}  // namespace kimi::api
