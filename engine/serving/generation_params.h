// Reads the generation fields of an OpenAI request body: sampling (temperature, top_p,
// top_k, presence/frequency penalty, seed, logprobs/top_logprobs), stop strings, and the
// output cap (max_completion_tokens, else max_tokens).
//
// Only the types and the engine's own ranges are checked here (SamplingParams::Validate);
// the product's request rules (K3's allowed temperature and top_p, n) are the API layer's.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/sampler.h"
#include "kimi/status.h"

namespace kimi::serving {

struct GenerationParams {
  SamplingParams sampling;
  std::vector<std::string> stop;
  std::optional<int64_t> max_tokens;  // absent: the service's default
};

// Errors: InvalidArgument naming the field (wrong type, out of range, empty stop string).
Result<GenerationParams> GenerationParamsFromBody(const nlohmann::ordered_json& body);

}  // namespace kimi::serving
