// The scalar fields chat and text completions share: model, temperature, top_p, the
// penalties, n (bounded by ModelRequestRules), max_tokens / max_completion_tokens, stop (count
// and bytes bounded per model), logit_bias (token ids of the model's vocabulary, values in
// [-100, 100], at most kMaxLogitBias entries), seed, stream and stream_options.
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include "api/request/field_error.h"
#include "api/request/request_validator.h"

namespace kimi::api::request {

inline constexpr size_t kMaxLogitBias = 300;

// Checks those fields of `body` (an object) and records them in `out`.
Status CheckSamplingFields(const Json& body, const ModelRequestRules& rules, ValidatedRequest* out);

}  // namespace kimi::api::request
