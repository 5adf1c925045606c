// Sampler: penalties, mask, logprobs, then greedy or temperature/top-k/top-p sampling.
#include "kimi/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace kimi {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}  // namespace

std::optional<int32_t> LogitBiasTokenId(std::string_view key) {
  const bool canonical = !key.empty() && key.size() <= 9 && (key.size() == 1 || key[0] != '0') &&
                         key.find_first_not_of("0123456789") == std::string_view::npos;
  if (!canonical) return std::nullopt;
  int32_t id = 0;
  for (char c : key) id = id * 10 + (c - '0');
  return id;
}

Status SamplingParams::Validate() const {
  if (!(temperature >= 0.0f && temperature <= 1.0f)) {
    return Status::InvalidArgument("temperature must be in [0, 1], got " + std::to_string(temperature));
  }
  if (!(top_p > 0.0f && top_p <= 1.0f)) return Status::InvalidArgument("top_p must be in (0, 1], got " + std::to_string(top_p));
  if (top_k < 0) return Status::InvalidArgument("top_k must be >= 0, got " + std::to_string(top_k));
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) {
    return Status::InvalidArgument("presence_penalty must be in [-2, 2], got " + std::to_string(presence_penalty));
  }
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) {
    return Status::InvalidArgument("frequency_penalty must be in [-2, 2], got " + std::to_string(frequency_penalty));
  }
  if (logit_bias.size() > kMaxLogitBias) {
    return Status::InvalidArgument("logit_bias must have at most " + std::to_string(kMaxLogitBias) + " entries");
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) return Status::InvalidArgument("logit_bias names token " + std::to_string(id));
    if (!(bias >= -100.0f && bias <= 100.0f)) {
      return Status::InvalidArgument("logit_bias." + std::to_string(id) + " must be in [-100, 100]");
    }
  }
  if (top_logprobs < -1 || top_logprobs > 20) {
    return Status::InvalidArgument("top_logprobs must be in [0, 20], got " + std::to_string(top_logprobs));
  }
  return Status::OK();
}

TokenMask::TokenMask(int64_t vocab_size, bool allow_all)
    : vocab_size_(vocab_size), words_(size_t((vocab_size + 63) / 64), allow_all ? ~uint64_t(0) : 0) {
  if (allow_all && vocab_size % 64 != 0) words_.back() = (uint64_t(1) << (vocab_size % 64)) - 1;
}

int64_t TokenMask::CountAllowed() const {
  int64_t n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

Sampler::Sampler(const SamplingParams& params, int64_t vocab_size, uint64_t seed)
    : params_(params), vocab_size_(vocab_size), rng_(params.seed.value_or(seed)) {}

double Sampler::Uniform() { return double(rng_() >> 11) * 0x1.0p-53; }

Result<SampledToken> Sampler::Sample(std::span<const float> logits, const TokenMask* mask) {
  if (int64_t(logits.size()) != vocab_size_) {
    return Status::InvalidArgument("logits row has " + std::to_string(logits.size()) + " entries, vocabulary " +
                                   std::to_string(vocab_size_));
  }
  if (mask != nullptr && mask->vocab_size() != vocab_size_) {
    return Status::InvalidArgument("token mask covers " + std::to_string(mask->vocab_size()) + " tokens, vocabulary " +
                                   std::to_string(vocab_size_));
  }
  row_.assign(logits.begin(), logits.end());
  for (const auto& [id, count] : counts_) {
    row_[id] -= params_.frequency_penalty * float(count) + params_.presence_penalty;
  }
  for (const auto& [id, bias] : params_.logit_bias) {
    if (id >= vocab_size_) {
      return Status::InvalidArgument("logit_bias names token " + std::to_string(id) + ", past the vocabulary of " +
                                     std::to_string(vocab_size_));
    }
    row_[id] += bias;
  }
  if (mask != nullptr) {
    for (int64_t i = 0; i < vocab_size_; ++i) {
      if (!mask->allowed(i)) row_[i] = kNegInf;
    }
  }
  float max = kNegInf;
  for (float x : row_) max = std::max(max, x);
  if (max == kNegInf) return Status::FailedPrecondition("the token mask leaves no token to choose");

  SampledToken out;
  out.id = Draw(row_);
  if (params_.top_logprobs >= 0) {
    double sum = 0;
    for (float x : row_) sum += std::exp(double(x) - max);
    const double log_z = double(max) + std::log(sum);
    out.logprob = float(double(row_[out.id]) - log_z);
    const int64_t n = std::min<int64_t>(params_.top_logprobs, vocab_size_);
    std::vector<int32_t> ids(static_cast<size_t>(vocab_size_));
    for (int64_t i = 0; i < vocab_size_; ++i) ids[i] = int32_t(i);
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(),
                      [&](int32_t a, int32_t b) { return row_[a] > row_[b] || (row_[a] == row_[b] && a < b); });
    for (int64_t i = 0; i < n; ++i) out.top.push_back({ids[i], float(double(row_[ids[i]]) - log_z)});
  }
  ++counts_[out.id];
  return out;
}

int32_t Sampler::Draw(std::span<const float> row) {
  if (params_.temperature == 0.0f) {
    int32_t best = 0;
    for (int64_t i = 1; i < vocab_size_; ++i) {
      if (row[i] > row[best]) best = int32_t(i);  // strict: the lower index keeps a tie
    }
    return best;
  }
  order_.clear();
  for (int64_t i = 0; i < vocab_size_; ++i) {
    if (row[i] != kNegInf) order_.push_back(int32_t(i));
  }
  auto higher = [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
  const bool top_k = params_.top_k > 0 && size_t(params_.top_k) < order_.size();
  if (top_k) {
    std::partial_sort(order_.begin(), order_.begin() + params_.top_k, order_.end(), higher);
    order_.resize(size_t(params_.top_k));
  } else if (params_.top_p < 1.0f) {
    std::sort(order_.begin(), order_.end(), higher);
  }
  // Weights relative to the best candidate keep exp() in range.
  float max = kNegInf;
  for (int32_t id : order_) max = std::max(max, row[id]);
  const double inv_t = 1.0 / double(params_.temperature);
  std::vector<double> weight(order_.size());
  double total = 0;
  for (size_t i = 0; i < order_.size(); ++i) total += weight[i] = std::exp((double(row[order_[i]]) - max) * inv_t);
  size_t kept = order_.size();
  if (params_.top_p < 1.0f) {
    // order_ is sorted by descending probability here; keep the shortest prefix reaching top_p.
    double mass = 0;
    for (size_t i = 0; i < order_.size(); ++i) {
      mass += weight[i];
      if (mass >= double(params_.top_p) * total) {
        kept = i + 1;
        break;
      }
    }
    total = mass;
  }
  const double target = Uniform() * total;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += weight[i];
    if (target < cumulative) return order_[i];
  }
  return order_[kept - 1];  // rounding left target at the very top
}

}  // namespace kimi
