// BF16-weight products with AVX2+FMA: a streaming GEMV for decode batches and the blocked
// GEMM (gemm_driver_avx2.h) for prefill.
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

// R weight rows × MB activation rows: each 8-wide weight vector is loaded once and used MB
// times, so the weights cross the memory bus once per MB vectors.
template <int R, int MB>
void GemvTile(const float* x, int64_t ldx, const uint16_t* w, int64_t K, float* y, int64_t ldy) {
  __m256 acc[R][MB];
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    for (int r = 0; r < R; ++r) {
      __m256 wv = LoadBf16x8(w + r * K + k);
      for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + m * ldx + k), acc[r][m]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int m = 0; m < MB; ++m) {
      float s = HorizontalSum(acc[r][m]);
      for (int64_t kk = k; kk < K; ++kk) s += Bf16Scalar(w[r * K + kk]) * x[m * ldx + kk];
      y[m * ldy + r] = s;
    }
  }
}

template <int R>
void GemvRows(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t K, float* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + 3 <= M; m += 3) GemvTile<R, 3>(x + m * ldx, ldx, w, K, y + m * ldy, ldy);
  if (M - m == 2) GemvTile<R, 2>(x + m * ldx, ldx, w, K, y + m * ldy, ldy);
  if (M - m == 1) GemvTile<R, 1>(x + m * ldx, ldx, w, K, y + m * ldy, ldy);
}

struct Bf16Packer {
  const uint16_t* w;
  int64_t K;
  void Pack(int64_t n0, int64_t rows, int64_t k0, int64_t kc, float* dst) const {
    for (int64_t p = 0; p * kNR < rows; ++p) {
      float* panel = dst + p * kc * kNR;
      for (int64_t j = 0; j < kNR; ++j) {
        const int64_t n = p * kNR + j;
        if (n >= rows) {
          for (int64_t k = 0; k < kc; ++k) panel[k * kNR + j] = 0.0f;
          continue;
        }
        const uint16_t* src = w + (n0 + n) * K + k0;
        int64_t k = 0;
        for (; k + 8 <= kc; k += 8) {
          alignas(32) float tmp[8];
          _mm256_store_ps(tmp, LoadBf16x8(src + k));
          for (int i = 0; i < 8; ++i) panel[(k + i) * kNR + j] = tmp[i];
        }
        for (; k < kc; ++k) panel[k * kNR + j] = Bf16Scalar(src[k]);
      }
    }
  }
};

}  // namespace

void GemvBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  int64_t n = 0;
  for (; n + 4 <= N; n += 4) GemvRows<4>(x, ldx, w + n * K, M, K, y + n, ldy);
  for (; n < N; ++n) GemvRows<1>(x, ldx, w + n * K, M, K, y + n, ldy);
}

void GemmBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  BlockedGemm(Bf16Packer{w, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
