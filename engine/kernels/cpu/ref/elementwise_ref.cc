// Reference element-wise and row-wise ops, written as their formulas.
#include <cmath>

#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {
namespace {
float SigmoidOf(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

void RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_sq += double(xr[i]) * xr[i];
    float inv = 1.0f / std::sqrt(static_cast<float>(sum_sq / dim) + eps);
    for (int64_t i = 0; i < dim; ++i) out[r * dim + i] = xr[i] * inv * weight[i];
  }
}

void Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    float a = beta * std::tanh(gate[i] / beta) * SigmoidOf(gate[i]);
    float u = beta_lin * std::tanh(up[i] / beta_lin);
    out[i] = a * u;
  }
}

void Silu(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * SigmoidOf(x[i]);
}

void Sigmoid(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = SigmoidOf(x[i]);
}

void MulSigmoid(const float* x, const float* gate, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * SigmoidOf(gate[i]);
}

void Softmax(const float* x, int64_t rows, int64_t n, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, xr[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      o[i] = std::exp(xr[i] - mx);
      sum += o[i];
    }
    float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) o[i] *= inv;
  }
}

void L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_sq += double(xr[i]) * xr[i];
    float factor = scale / std::sqrt(static_cast<float>(sum_sq) + eps);
    for (int64_t i = 0; i < dim; ++i) out[r * dim + i] = xr[i] * factor;
  }
}

void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      float rate = std::exp(A_log[h]);
      for (int64_t d = 0; d < dk; ++d) {
        int64_t i = t * H * dk + h * dk + d;
        g[i] = lower_bound * SigmoidOf(rate * (f[i] + dt_bias[h * dk + d]));
      }
    }
  }
}

}  // namespace kimi::kernels::ref
