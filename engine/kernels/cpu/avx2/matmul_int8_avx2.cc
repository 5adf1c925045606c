// Int8-weight products with AVX2+FMA (weights q + 128 per byte, one fp32 scale per row; the
// activations stay fp32). The GEMV flips each byte's top bit (q + 128 → q as int8), widens 16
// at a time to fp32 and takes the dot products with FMAs, two weight rows at a time for one or
// two activation rows (four independent sums per vector step) and one at a time for three or
// four; the row scale is applied once to the finished sum, as the reference does. The GEMM
// converts blocks of W to scaled fp32 panels for the shared blocked driver.
#include <immintrin.h>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 16 weights from q + 128 bytes to fp32 q.
inline void Widen16(const uint8_t* w, __m256* lo, __m256* hi) {
  const __m128i q = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)), _mm_set1_epi8(char(0x80)));
  *lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
  *hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)));
}

// y[r, j] for R activation rows and NW weight rows starting at w (row stride K).
template <int R, int NW>
void Tile(const float* x, int64_t ldx, const uint8_t* w, const float* scale, int64_t K, float* y, int64_t ldy) {
  __m256 acc[R][NW][2];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NW; ++j) acc[r][j][0] = acc[r][j][1] = _mm256_setzero_ps();
  const int64_t K16 = K / 16 * 16;
  for (int64_t k = 0; k < K16; k += 16) {
    __m256 wl[NW], wh[NW];
    for (int j = 0; j < NW; ++j) Widen16(w + j * K + k, &wl[j], &wh[j]);
    for (int r = 0; r < R; ++r) {
      const __m256 x0 = _mm256_loadu_ps(x + r * ldx + k), x1 = _mm256_loadu_ps(x + r * ldx + k + 8);
      for (int j = 0; j < NW; ++j) {
        acc[r][j][0] = _mm256_fmadd_ps(x0, wl[j], acc[r][j][0]);
        acc[r][j][1] = _mm256_fmadd_ps(x1, wh[j], acc[r][j][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < NW; ++j) {
      float sum = HorizontalSum(_mm256_add_ps(acc[r][j][0], acc[r][j][1]));
      for (int64_t k = K16; k < K; ++k) sum += x[r * ldx + k] * float(int(w[j * K + k]) - 128);
      y[r * ldy + j] = sum * scale[j];
    }
  }
}

// All N weight rows against R activation rows.
template <int R>
void Rows(const float* x, int64_t ldx, const uint8_t* w, const float* scale, int64_t N, int64_t K, float* y,
          int64_t ldy) {
  constexpr int NW = R <= 2 ? 2 : 1;
  int64_t n = 0;
  for (; n + NW <= N; n += NW) Tile<R, NW>(x, ldx, w + n * K, scale + n, K, y + n, ldy);
  for (; n < N; ++n) Tile<R, 1>(x, ldx, w + n * K, scale + n, K, y + n, ldy);
}

struct Int8Packer {
  const uint8_t* w;
  const float* scale;
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
        const uint8_t* row = w + (n0 + n) * K + k0;
        const float s = scale[n0 + n];
        for (int64_t k = 0; k < kc; ++k) panel[k * kNR + j] = float(int(row[k]) - 128) * s;
      }
    }
  }
};

}  // namespace

void GemvInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) Rows<4>(x + m * ldx, ldx, w, w_scale, N, K, y + m * ldy, ldy);
  switch (M - m) {
    case 3: return Rows<3>(x + m * ldx, ldx, w, w_scale, N, K, y + m * ldy, ldy);
    case 2: return Rows<2>(x + m * ldx, ldx, w, w_scale, N, K, y + m * ldy, ldy);
    case 1: return Rows<1>(x + m * ldx, ldx, w, w_scale, N, K, y + m * ldy, ldy);
    default: return;
  }
}

void GemmInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  BlockedGemm(Int8Packer{w, w_scale, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
