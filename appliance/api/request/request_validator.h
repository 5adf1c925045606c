// Request validation for /v1/chat/completions and /v1/completions: the K3 request rules of
// Moonshot's vendor verifier, applied before a request reaches the router.
//
// ValidateChatCompletion() checks every rule of docs/api.md "Request rules" (sampling bounds,
// thinking, tools global and dynamic, tool_choice, response_format, messages and the scalar
// fields) and returns the facts the server needs to answer (stream, include_usage, limits,
// tool schemas) with the normalised body, from which the engine's typed request is read once
// (api/request_gate.h) and which an upstream server receives (api/forward_body.h).
// A failed rule is Status::InvalidArgument whose message starts with the request field's path
// ("temperature must be in [0, 1] (got 1.1)"); RequestErrorParam() returns that path for
// OpenAI's error `param`.
//
// Normalisation of the chat body: the thinking controls (thinking, reasoning_effort,
// thinking_effort, preserve_thinking, chat_template_kwargs) are resolved once and written as
// chat_template_kwargs {thinking, thinking_effort, preserve_thinking}, the form both the K3
// chat format (ParseChatRequest) and vLLM read; the request-level copies are removed. Every
// other field is kept as sent, tool declarations included (the prompt declares the tools the
// client wrote; their strict-form schemas are in ValidatedRequest::tools for constrained
// decoding).
// Public header of api/: other folders include it.
// Owns nothing. Thread safety: pure functions, callable from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "config/model_request_rules.h"
#include "kimi/serving_request.h"
#include "kimi/status.h"

namespace kimi::api {

// One declared tool, global (request `tools`) or dynamic (a system message's `tools`).
struct DeclaredTool {
  std::string name;
  bool dynamic = false;
  bool strict = false;  // function.strict was true
  // function.parameters: in OpenAI's strict form when strict is set or the effective
  // tool_choice is auto (NormaliseStrictSchema), otherwise as sent; null when absent.
  nlohmann::ordered_json parameters;
  bool parameters_normalised = false;
};

struct ValidatedRequest {
  Endpoint endpoint = Endpoint::kChatCompletions;
  nlohmann::ordered_json body;  // normalised; kept only to forward upstream (api/forward_body.h)
  std::string model;
  bool stream = false;
  bool include_usage = false;                // stream_options.include_usage
  // max_tokens and max_completion_tokens each as sent, for limits that name the field (the
  // effective cap is generation.max_tokens).
  std::optional<int64_t> max_tokens_field;
  std::optional<int64_t> max_completion_tokens_field;
  std::optional<double> temperature;
  std::optional<int64_t> seed;
  // Every generation field, as kimi::ReadGenerationParams read it (max_tokens: max_completion_tokens,
  // else max_tokens; stop: a single string becomes one entry): what the engine's typed request
  // carries.
  GenerationParams generation;

  // Chat completions only.
  bool thinking = true;
  std::optional<std::string> thinking_effort = "max";  // nullopt: the prompt states no effort
  bool preserve_thinking = true;
  std::string tool_choice = "none";          // effective: "auto", "none" or "required"
  std::vector<DeclaredTool> tools;           // global ones first, then dynamic in message order
  std::string response_format = "text";      // "text", "json_object" or "json_schema"
  nlohmann::ordered_json response_schema;    // json_schema.schema, else null
  bool response_schema_strict = false;

  // Completions only.
  std::string prompt;

  // Top-level fields this API does not know: the handler logs them, one line per request. (Other
  // servers' options that would change the answer are refused instead: unapplied_options.h.)
  std::vector<std::string> ignored_fields;
};

Result<ValidatedRequest> ValidateChatCompletion(const nlohmann::ordered_json& body, const ModelRequestRules& rules);
Result<ValidatedRequest> ValidateCompletion(const nlohmann::ordered_json& body, const ModelRequestRules& rules);

// The request field a validation error names, for OpenAI's error `param`: the path its
// message starts with, when that path starts at a known request field; nullopt for any other
// status (so it may be applied to every handler error).
std::optional<std::string> RequestErrorParam(const Status& status);

}  // namespace kimi::api
