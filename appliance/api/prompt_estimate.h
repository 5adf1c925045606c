// EstimatePromptTokens: a request's prompt size in tokens, estimated from its body without a
// tokenizer: about four bytes a token for the messages (or prompt), tool declarations and
// response format, as JSON. Used where no backend count exists: the router's load estimate
// before a request runs, and the quota count of a request cut short before the backend
// reported its usage (http/generation_audit.h).
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace kimi::api {

inline int64_t EstimatePromptTokens(const nlohmann::ordered_json& body) {
  int64_t prompt_bytes = 0;
  for (const char* key : {"messages", "tools", "prompt", "response_format"}) {
    auto it = body.find(key);
    if (it != body.end()) prompt_bytes += static_cast<int64_t>(it->dump().size());
  }
  return prompt_bytes / 4;
}

}  // namespace kimi::api
