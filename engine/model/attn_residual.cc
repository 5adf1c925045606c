#include "model/attn_residual.h"

#include <cmath>
#include <cstring>

namespace kimi::model {

void AttnResWeights::Bind(WeightBinder& binder, const std::string& stem, int64_t D) {
  std::vector<float> norm = binder.Vector(stem + "_norm.weight", {D});
  std::vector<float> proj = binder.Vector(stem + "_proj.weight", {1, D});
  if (!binder.status().ok()) return;
  norm_times_proj.resize(D);
  for (int64_t i = 0; i < D; ++i) norm_times_proj[i] = norm[i] * proj[i];
}

void MixDepth(std::span<const float* const> blocks, const float* partial, const AttnResWeights& w,
              int64_t R, int64_t D, float eps, float* out) {
  if (blocks.empty()) {
    std::memcpy(out, partial, sizeof(float) * R * D);
    return;
  }
  const size_t n = blocks.size() + 1;
  std::vector<float> alpha(n);
  const float* wv = w.norm_times_proj.data();
  for (int64_t r = 0; r < R; ++r) {
    auto candidate = [&](size_t c) { return (c < blocks.size() ? blocks[c] : partial) + r * D; };
    // Logit of each candidate: its RMS-normalised projection onto w.
    float top = -INFINITY;
    for (size_t c = 0; c < n; ++c) {
      const float* v = candidate(c);
      float dot = 0, sq = 0;
      for (int64_t i = 0; i < D; ++i) {
        dot += v[i] * wv[i];
        sq += v[i] * v[i];
      }
      alpha[c] = dot / std::sqrt(sq / float(D) + eps);
      top = std::fmax(top, alpha[c]);
    }
    // Softmax over depth.
    float sum = 0;
    for (size_t c = 0; c < n; ++c) sum += (alpha[c] = std::exp(alpha[c] - top));
    // The weighted sum of the raw candidates.
    float* o = out + r * D;
    std::memset(o, 0, sizeof(float) * D);
    for (size_t c = 0; c < n; ++c) {
      const float a = alpha[c] / sum;
      const float* v = candidate(c);
      for (int64_t i = 0; i < D; ++i) o[i] += a * v[i];
    }
  }
}

}  // namespace kimi::model
