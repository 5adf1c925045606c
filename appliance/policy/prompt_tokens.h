// How the policy step counts a request's prompt tokens without knowing the engine: a counter
// the daemon builds over the serving model's tokenizer (the engine's kimi::CountPromptTokens,
// the count usage.prompt_tokens reports), and tests build over anything.
//
// Thread safety: a counter may be called from many request threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kimi/status.h"

namespace kimi {
struct EncodedRequestPrompt;  // kimi/request_prompt.h
}  // namespace kimi

namespace kimi::policy {

// `tokens` is exact, or (exact false) an upper bound no larger than the bound_enough asked for.
struct PromptTokens {
  int64_t tokens = 0;
  bool exact = true;
};

// Counts a rendered prompt (`chat`: /v1/chat/completions, else /v1/completions). An exact
// count tokenises *prompt in place (its ids then travel to the embedded engine, so that the
// prompt is tokenised once). When the rendered prompt has at most `bound_enough` bytes (>= 0)
// it may answer that byte count as an upper bound without tokenising (every token covers at
// least one byte). Errors: the tokenizer's.
using PromptTokenCounter =
    std::function<Result<PromptTokens>(EncodedRequestPrompt* prompt, bool chat, int64_t bound_enough)>;

// The counter for a served model; null when the appliance holds no tokenizer for it.
using PromptTokenCounterLookup = std::function<PromptTokenCounter(const std::string& model)>;

}  // namespace kimi::policy
