// The pieces every OpenAI response shares, streamed or whole: the response identity (id,
// created, model), the usage object, tool-call ids, and the one JSON writer the encoders
// use (compact, UTF-8 kept as is, invalid bytes dropped rather than replaced, never throws).
// Public header of api/: other folders include it.
// Thread safety: pure functions on values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/backend.h"

namespace kimi::api {

// Identical in every frame of one response and in the whole response.
struct ResponseMeta {
  std::string id;       // "chatcmpl-<request id>" or "cmpl-<request id>"
  int64_t created = 0;  // Unix seconds
  std::string model;
};

ResponseMeta NewResponseMeta(Endpoint endpoint, std::string_view request_id, std::string_view model);

// {"prompt_tokens","completion_tokens","total_tokens","completion_tokens_details":{"reasoning_tokens"}}
nlohmann::ordered_json UsageJson(const TokenUsage& usage);

// K3's tool-call id: "functions.<name>:<index>", unique within a response because indices are.
std::string ToolCallId(std::string_view name, int index);

std::string DumpJson(const nlohmann::ordered_json& value);

// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character
// boundary (at least one whole character, even when that is longer than max_bytes).
size_t Utf8PrefixLength(std::string_view text, size_t max_bytes);

}  // namespace kimi::api
