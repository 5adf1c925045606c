// The JSON forms of generated tokens' log-probabilities (kimi/token_logprobs.h) in OpenAI's
// shapes, written by the appliance's encoders and by `kimi-engine serve`, and read back from an
// upstream's chunks, so that both ends of the upstream path agree by construction.
//
// A token is written as {"token", "logprob", "bytes"}: "token" is its text when its bytes are
// valid UTF-8 and otherwise "bytes:" followed by \xNN escapes (as vLLM writes such tokens);
// "bytes" always holds the exact bytes. Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "kimi/token_logprobs.h"

namespace kimi::chat {

std::string LogprobTokenText(std::string_view bytes);

// Chat completions: the array of `choices[].logprobs.content`.
nlohmann::ordered_json ChatLogprobsContent(const std::vector<TokenLogprobs>& tokens);

// /v1/completions: the legacy `choices[].logprobs` object (tokens, token_logprobs,
// top_logprobs as {token: logprob} objects, text_offset). `text_offset` is where the first
// token's text starts in the whole completion; it advances by each token's byte length.
nlohmann::ordered_json CompletionLogprobs(const std::vector<TokenLogprobs>& tokens, int64_t text_offset);

// Reads a `logprobs.content` array as an upstream sends it (null reads as empty). An entry
// without "bytes" takes its token's UTF-8. Errors: InvalidArgument naming what is malformed.
Result<std::vector<TokenLogprobs>> ParseChatLogprobsContent(const nlohmann::json& content);

// Reads the legacy /v1/completions logprobs object. Tokens carry no bytes there: a
// "bytes:\xNN…" name is decoded back, any other name is taken as UTF-8.
Result<std::vector<TokenLogprobs>> ParseCompletionLogprobs(const nlohmann::json& logprobs);

}  // namespace kimi::chat
