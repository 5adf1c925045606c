// The scalar fields chat and text completions share, as the model's rules bound them: model,
// temperature, top_p, the penalties, n (bounded by ModelRequestRules), stop (count and bytes
// per model), logit_bias (token ids of the model's vocabulary, values in [-100, 100], at most
// kMaxLogitBias entries), seed, stream and stream_options; max_tokens / max_completion_tokens
// are recorded as sent. The OpenAI dialect's own rules of the generation fields (types,
// non-empty stop strings, caps >= 1, top_logprobs) are the one reader's,
// kimi::ReadGenerationParams, which the validator calls after these.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"
#include "api/request/request_validator.h"
#include "kimi/sampler.h"

namespace kimi::api::request {

// The engine's own bound (SamplingParams), so the two refuse the same maps.
inline constexpr size_t kMaxLogitBias = SamplingParams::kMaxLogitBias;

// Checks those fields of `body` (an object) and records them in `out`.
Status CheckSamplingFields(const Json& body, const ModelRequestRules& rules, ValidatedRequest* out);

}  // namespace kimi::api::request
