// Element-wise and row-wise ops with AVX2+FMA (vec_math_avx2.h supplies exp/tanh/sigmoid).
#include <cmath>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

float SumOfSquares(const float* x, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    a0 = _mm256_fmadd_ps(v, v, a0);
  }
  float s = HorizontalSum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += x[i] * x[i];
  return s;
}

}  // namespace

void RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(SumOfSquares(xr, dim) / dim + eps));
    int64_t i = 0;
    for (; i + 8 <= dim; i += 8)
      _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), inv), _mm256_loadu_ps(weight + i)));
    const float inv_s = _mm256_cvtss_f32(inv);
    for (; i < dim; ++i) o[i] = xr[i] * inv_s * weight[i];
  }
}

void Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out) {
  const __m256 vb = _mm256_set1_ps(beta), vib = _mm256_set1_ps(1.0f / beta);
  const __m256 vbl = _mm256_set1_ps(beta_lin), vibl = _mm256_set1_ps(1.0f / beta_lin);
  auto situ8 = [&](__m256 g, __m256 u) {
    __m256 a = _mm256_mul_ps(_mm256_mul_ps(vb, Tanh8(_mm256_mul_ps(g, vib))), Sigmoid8(g));
    __m256 ul = _mm256_mul_ps(vbl, Tanh8(_mm256_mul_ps(u, vibl)));
    return _mm256_mul_ps(a, ul);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, situ8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) StorePartial(out + i, n - i, situ8(LoadPartial(gate + i, n - i, 0.0f), LoadPartial(up + i, n - i, 0.0f)));
}

void Silu(const float* x, int64_t n, float* out) {
  Map8(x, n, out, [](__m256 v) { return _mm256_mul_ps(v, Sigmoid8(v)); });
}

void Sigmoid(const float* x, int64_t n, float* out) { Map8(x, n, out, [](__m256 v) { return Sigmoid8(v); }); }

void MulSigmoid(const float* x, const float* gate, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), Sigmoid8(_mm256_loadu_ps(gate + i))));
  if (i < n)
    StorePartial(out + i, n - i, _mm256_mul_ps(LoadPartial(x + i, n - i, 0.0f), Sigmoid8(LoadPartial(gate + i, n - i, 0.0f))));
}

void Softmax(const float* x, int64_t rows, int64_t n, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(xr + i));
    float mx = HorizontalMax(vmax);
    for (; i < n; ++i) mx = std::fmax(mx, xr[i]);
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 vsum = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
      __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vm));
      vsum = _mm256_add_ps(vsum, e);
      _mm256_storeu_ps(o + i, e);
    }
    float sum = HorizontalSum(vsum);
    if (i < n) {
      __m256 e = Exp8(_mm256_sub_ps(LoadPartial(xr + i, n - i, -INFINITY), vm));
      // Lanes past n hold e^(−inf−max) clamped to ~1e-38; they are not stored nor summed.
      alignas(32) float buf[8];
      _mm256_store_ps(buf, e);
      for (int64_t j = 0; j < n - i; ++j) {
        o[i + j] = buf[j];
        sum += buf[j];
      }
    }
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_loadu_ps(o + i), inv));
    for (; i < n; ++i) o[i] *= _mm256_cvtss_f32(inv);
  }
}

void L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    const float f = scale / std::sqrt(SumOfSquares(xr, dim) + eps);
    const __m256 vf = _mm256_set1_ps(f);
    int64_t i = 0;
    for (; i + 8 <= dim; i += 8) _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_loadu_ps(xr + i), vf));
    for (; i < dim; ++i) o[i] = xr[i] * f;
  }
}

void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g) {
  const __m256 lb = _mm256_set1_ps(lower_bound);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      const __m256 rate = _mm256_set1_ps(std::exp(A_log[h]));
      const float* fr = f + (t * H + h) * dk;
      const float* bias = dt_bias + h * dk;
      float* gr = g + (t * H + h) * dk;
      auto gate8 = [&](__m256 fv, __m256 bv) {
        return _mm256_mul_ps(lb, Sigmoid8(_mm256_mul_ps(rate, _mm256_add_ps(fv, bv))));
      };
      int64_t d = 0;
      for (; d + 8 <= dk; d += 8) _mm256_storeu_ps(gr + d, gate8(_mm256_loadu_ps(fr + d), _mm256_loadu_ps(bias + d)));
      if (d < dk) StorePartial(gr + d, dk - d, gate8(LoadPartial(fr + d, dk - d, 0.0f), LoadPartial(bias + d, dk - d, 0.0f)));
    }
  }
}

}  // namespace kimi::kernels::avx2
