// ServingRequest: the engine's typed request, what ChatService::Start runs. The appliance's
// API layer builds it once from the validated request; the worker protocol (`kimi-engine
// serve`) builds it with ReadServingRequest().
//
// ReadServingRequest() is the one reader of an OpenAI chat-completions or completions body
// into this type, for the worker protocol and the appliance's API alike (whose request rules
// call ReadGenerationParams, and ReadPromptFields once they passed): the chat fields through
// ParseChatRequest (kimi/chat_format.h), the generation fields (sampling, stop strings, the
// output cap) and, for completions, the prompt. The rules of the OpenAI dialect itself live
// here once: types (integers as 3 or 3.0), stop strings non-empty, top_logprobs in [0, 20]
// and only with logprobs, max_tokens and max_completion_tokens at least 1; messages start
// with the field's path ("stop[1] must not be empty"). A product's per-model bounds are its
// API layer's, and the engine's own ranges (CheckEngineLimits) are checked where the engine
// runs a request (ChatService::Start), since another backend may allow more.
//
// Owns nothing. Thread safety: a pure function; a ServingRequest is a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/chat_format.h"
#include "kimi/sampler.h"
#include "kimi/status.h"

namespace kimi {

enum class ServingEndpoint { kChatCompletions, kCompletions };

struct GenerationParams {
  SamplingParams sampling;
  std::vector<std::string> stop;      // matched after every token, removed from the output
  std::optional<int64_t> max_tokens;  // absent: the service's default
};

struct ServingRequest {
  ServingEndpoint endpoint = ServingEndpoint::kChatCompletions;
  ChatRequest chat;                  // chat completions: what the prompt is rendered from
  bool parallel_tool_calls = false;  // chat: a required tool choice may make several calls
  std::string prompt;                // completions: the prompt text, tokenised as is
  GenerationParams generation;
};

// Errors: InvalidArgument naming the field (wrong type, out of range, empty stop string, no
// prompt).
Result<ServingRequest> ReadServingRequest(const nlohmann::ordered_json& body, ServingEndpoint endpoint);

// The generation fields alone (temperature, top_p, top_k, the penalties, seed,
// logprobs/top_logprobs, stop, max_completion_tokens else max_tokens).
Result<GenerationParams> ReadGenerationParams(const nlohmann::ordered_json& body);
// The rest of *request for its endpoint (set first): the chat fields and
// parallel_tool_calls, or the completions prompt.
Status ReadPromptFields(const nlohmann::ordered_json& body, ServingRequest* request);

// The engine's own bounds of generation fields: SamplingParams::Validate and the stop string
// bounds of kimi/runtime.h (kMaxStopStrings, kMaxStopStringBytes). InvalidArgument naming the
// field.
Status CheckEngineLimits(const GenerationParams& params);

}  // namespace kimi
