// How the policy step counts a request's prompt tokens without knowing the engine: a counter
// the daemon builds over the serving model's tokenizer and chat format (the engine's
// kimi::CountPromptTokens, the count usage.prompt_tokens reports), and tests build over
// anything.
//
// Thread safety: a counter may be called from many request threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi {
struct EncodedRequestPrompt;  // kimi/chat_service.h; carried, never opened, here
}  // namespace kimi

namespace kimi::policy {

// `tokens` is exact, or (exact false) an upper bound no larger than the bound_enough asked for.
struct PromptTokens {
  int64_t tokens = 0;
  bool exact = true;
  // The engine's ids behind an exact count (null otherwise), handed to the embedded engine
  // with the request so that the prompt is tokenised once.
  std::shared_ptr<const EncodedRequestPrompt> encoded;
};

// Counts the prompt of a validated body (`chat`: /v1/chat/completions, else /v1/completions).
// When the rendered prompt has at most `bound_enough` bytes (>= 0) it may answer that byte
// count as an upper bound without tokenising (every token covers at least one byte). Errors:
// the body cannot be rendered (InvalidArgument).
using PromptTokenCounter =
    std::function<Result<PromptTokens>(const nlohmann::ordered_json& body, bool chat, int64_t bound_enough)>;

// The counter for a served model; null when the appliance holds no tokenizer for it.
using PromptTokenCounterLookup = std::function<PromptTokenCounter(const std::string& model)>;

}  // namespace kimi::policy
