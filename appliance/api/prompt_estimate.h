// EstimatePromptTokens: a request's prompt size in tokens, estimated from the typed request
// without a tokenizer: about four bytes a token for the messages (or prompt), tool
// declarations and response format, as JSON. Used where no backend count exists: the
// router's load estimate before a request runs, and the quota count of a request cut short
// before the backend reported its usage (http/generation_audit.h).
// Public header of api/: other folders include it.
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "kimi/serving_request.h"

namespace kimi::api {

inline int64_t EstimatePromptTokens(const ServingRequest& request) {
  int64_t prompt_bytes = 0;
  if (request.endpoint == ServingEndpoint::kCompletions) {
    prompt_bytes += static_cast<int64_t>(nlohmann::ordered_json(request.prompt).dump().size());
  } else {
    prompt_bytes += static_cast<int64_t>(request.chat.messages.dump().size());
    if (!request.chat.tools.is_null()) prompt_bytes += static_cast<int64_t>(request.chat.tools.dump().size());
    if (request.chat.has_response_format) {
      prompt_bytes += static_cast<int64_t>(request.chat.response_format.dump().size());
    }
  }
  return prompt_bytes / 4;
}

}  // namespace kimi::api
