// Token sampling for one request: penalties, an optional constrained-decoding mask, temperature,
// top-k, top-p, a per-request random stream, and the log-probabilities a client may ask for.
//
// Order of operations on one row of logits (what Sample() promises):
//   1. presence and frequency penalties over the tokens this sampler has chosen so far
//      (logit -= frequency_penalty * count + presence_penalty, for count > 0), then the
//      request's logit_bias added to the tokens it names (as OpenAI's API: -100 all but bans a
//      token, 100 all but forces it);
//   2. the token mask, if any: a token the mask does not allow gets -inf;
//   3. logprobs are taken here, as log_softmax of the row after 1 and 2 (the distribution the
//      model was allowed to choose from, before temperature and truncation);
//   4. temperature 0: greedy argmax, the lower index winning ties; otherwise the row is scaled
//      by 1/temperature, cut to the top_k highest, then to the smallest prefix (in descending
//      probability) whose mass reaches top_p, and one token is drawn from what is left.
//
// Owns: its parameters, the counts of chosen tokens, its random stream (std::mt19937_64 seeded
// from the request's seed, so the same seed and the same logits give the same tokens).
// Thread safety: a Sampler is used by one thread at a time; distinct Samplers are independent.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kimi/status.h"

namespace kimi {

struct SamplingParams {
  float temperature = 1.0f;      // in [0, 1]; 0 means greedy
  float top_p = 1.0f;            // in (0, 1]
  int32_t top_k = 0;             // 0: no limit
  float presence_penalty = 0.0f;   // in [-2, 2]
  float frequency_penalty = 0.0f;  // in [-2, 2]
  std::optional<uint64_t> seed;  // absent: the runtime picks one per request
  int32_t top_logprobs = -1;     // -1: no logprobs; 0: the chosen token's; N: and N alternatives
  // Added to the logits of the tokens named: ids in [0, vocabulary), values in [-100, 100],
  // at most kMaxLogitBias entries.
  static constexpr size_t kMaxLogitBias = 300;
  std::vector<std::pair<int32_t, float>> logit_bias;

  // InvalidArgument naming the field that is out of range (logit_bias's ids are checked against
  // the vocabulary by Sample()).
  Status Validate() const;
};

// A logit_bias key as OpenAI writes a token id: decimal digits, no sign, no leading zero (so
// that no token is named twice with two biases), at most 9 digits; nullopt for anything else.
std::optional<int32_t> LogitBiasTokenId(std::string_view key);

// Which tokens may be chosen next: a bitset over the vocabulary. The constrained-decoding hook
// (structured output) fills one per step.
class TokenMask {
 public:
  // All tokens allowed (allow_all) or none.
  TokenMask(int64_t vocab_size, bool allow_all);
  int64_t vocab_size() const { return vocab_size_; }
  bool allowed(int64_t id) const { return (words_[size_t(id) >> 6] >> (id & 63)) & 1; }
  void Allow(int64_t id) { words_[size_t(id) >> 6] |= uint64_t(1) << (id & 63); }
  void Disallow(int64_t id) { words_[size_t(id) >> 6] &= ~(uint64_t(1) << (id & 63)); }
  // Keeps only the tokens whose bit is set in `allowed` (bit id & 63 of word id >> 6); words
  // past allowed.size() are left as they are.
  void Intersect(std::span<const uint64_t> allowed) {
    for (size_t i = 0; i < words_.size() && i < allowed.size(); ++i) words_[i] &= allowed[i];
  }
  int64_t CountAllowed() const;

 private:
  int64_t vocab_size_;
  std::vector<uint64_t> words_;
};

struct TokenLogprob {
  int32_t id = -1;
  float logprob = 0.0f;
};

struct SampledToken {
  int32_t id = -1;
  float logprob = 0.0f;             // filled when top_logprobs >= 0
  std::vector<TokenLogprob> top;    // the top_logprobs most likely, most likely first
};

class Sampler {
 public:
  // Precondition: params.Validate().ok(), vocab_size > 0. `seed` is used when params.seed is
  // absent.
  Sampler(const SamplingParams& params, int64_t vocab_size, uint64_t seed);

  // Chooses the next token from one row of logits (vocab_size floats) and counts it for the
  // penalties. Errors: InvalidArgument for a row or mask of the wrong size; FailedPrecondition
  // when the mask (with the logits) leaves no token to choose.
  Result<SampledToken> Sample(std::span<const float> logits, const TokenMask* mask = nullptr);

  const SamplingParams& params() const { return params_; }

 private:
  int32_t Draw(std::span<const float> row);
  double Uniform();  // in [0, 1)

  SamplingParams params_;
  int64_t vocab_size_;
  std::mt19937_64 rng_;
  std::unordered_map<int32_t, int32_t> counts_;  // chosen token -> times chosen
  std::vector<float> row_;                        // scratch: the processed row
  std::vector<int32_t> order_;                    // scratch: candidate ids
};

}  // namespace kimi
