// TokenLogprobs: a generated token's log-probability, and the most likely alternatives at its
// position, as a response reports them (OpenAI's `logprobs.content[]`).
//
// Tokens are named by their bytes, not their ids, so that every backend (the embedded engine,
// an upstream worker or vLLM server) produces the same thing. A token's bytes may be part of a
// UTF-8 character; the JSON form (serving/logprobs_json.h) says how such bytes are written.
//
// Thread safety: a plain value.
#pragma once

#include <string>
#include <vector>

namespace kimi {

struct TokenAlternative {
  std::string bytes;
  float logprob = 0.0f;
};

struct TokenLogprobs {
  std::string bytes;
  float logprob = 0.0f;
  std::vector<TokenAlternative> top;  // most likely first; empty unless top_logprobs > 0
};

}  // namespace kimi
