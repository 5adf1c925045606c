// Int8-weight products with AVX2+FMA, and AVX-512F where the CPU has it (weights q + 128 per
// byte, one fp32 scale per row; the activations stay fp32). The GEMV reads the bytes as they are
// stored, unsigned (b = q + 128), widening them straight from memory to fp32, and takes
// Σ x·q = Σ x·b − 128·Σ x with Σ x summed once per activation row: one widening, one convert
// and one FMA per 8 (16) weights, which keeps the loop under the memory's pace where a signed
// decode took twice the instructions. Two weight rows at a time for one or two activation rows
// (four independent sums per step), one for three or four; the row scale multiplies the
// finished sum, as in the reference. The GEMM converts blocks of W to scaled fp32 panels for
// the shared blocked driver.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/avx2/avx2.h"
#include "core/cpu_features.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Prefetch in address order: a tile of NW rows reads NW·step bytes per step, so the lines
// kPrefetchBytes past them are requested as one sequential stream (what the hardware
// prefetcher follows best; the BF16 GEMV measured the same, matmul_bf16_avx2.cc), up to the
// end of the matrix. Without it the tile stalled on its loads at a third of the read bandwidth.
constexpr int64_t kPrefetchBytes = 8192;

inline void PrefetchAhead(const uint8_t*& next, const uint8_t* end, int64_t bytes) {
  if (next < end) {
    for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(reinterpret_cast<const char*>(next + b), _MM_HINT_T0);
  }
  next += bytes;
}

// The finished outputs of a tile: row r, weight row j has its vector part `sums[r][j]` over the
// first kv columns (with the −128·Σx correction still to apply) and the tail in plain code.
template <int R, int NW>
void Finish(const float (&sums)[R][NW], const float* x, int64_t ldx, const float* xsum, const uint8_t* w,
            const float* scale, int64_t kv, int64_t K, float* y, int64_t ldy) {
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < NW; ++j) {
      float sum = sums[r][j] - 128.0f * xsum[r];
      for (int64_t k = kv; k < K; ++k) sum += x[r * ldx + k] * float(int(w[j * K + k]) - 128);
      y[r * ldy + j] = sum * scale[j];
    }
  }
}

// y[r, j] for R activation rows and NW weight rows starting at w (row stride K), 256-bit.
// Loops fully unrolled so that the accumulators live in registers (GCC keeps a partly unrolled
// array of vectors on the stack and reloads it every step).
template <int R, int NW>
void Tile256(const float* x, int64_t ldx, const float* xsum, const uint8_t* w, const uint8_t* end,
             const float* scale, int64_t K, float* y, int64_t ldy) {
  const uint8_t* next = w + kPrefetchBytes;
  __m256 acc[R][NW][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NW; ++j) acc[r][j][0] = acc[r][j][1] = _mm256_setzero_ps();
  const int64_t kv = K / 16 * 16;
  for (int64_t k = 0; k < kv; k += 16) {
    PrefetchAhead(next, end, NW * 16);
    __m256 lo[NW], hi[NW];
#pragma GCC unroll 4
    for (int j = 0; j < NW; ++j) {
      const uint8_t* p = w + j * K + k;
      lo[j] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
      hi[j] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8))));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 x0 = _mm256_loadu_ps(x + r * ldx + k), x1 = _mm256_loadu_ps(x + r * ldx + k + 8);
#pragma GCC unroll 4
      for (int j = 0; j < NW; ++j) {
        acc[r][j][0] = _mm256_fmadd_ps(x0, lo[j], acc[r][j][0]);
        acc[r][j][1] = _mm256_fmadd_ps(x1, hi[j], acc[r][j][1]);
      }
    }
  }
  float sums[R][NW];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NW; ++j) sums[r][j] = HorizontalSum(_mm256_add_ps(acc[r][j][0], acc[r][j][1]));
  Finish<R, NW>(sums, x, ldx, xsum, w, scale, kv, K, y, ldy);
}

#define KIMI_AVX512 gnu::target("avx512f")
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// Tile256 in 512-bit registers: 32 weights per step.
template <int R, int NW>
[[gnu::noinline, KIMI_AVX512]] void Tile512(const float* x, int64_t ldx, const float* xsum, const uint8_t* w,
                                            const uint8_t* end, const float* scale, int64_t K, float* y,
                                            int64_t ldy) {
  const uint8_t* next = w + kPrefetchBytes;
  __m512 acc[R][NW][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NW; ++j) acc[r][j][0] = acc[r][j][1] = _mm512_setzero_ps();
  const int64_t kv = K / 32 * 32;
  for (int64_t k = 0; k < kv; k += 32) {
    PrefetchAhead(next, end, NW * 32);
    __m512 lo[NW], hi[NW];
#pragma GCC unroll 4
    for (int j = 0; j < NW; ++j) {
      const uint8_t* p = w + j * K + k;
      lo[j] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
      hi[j] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16))));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 x0 = _mm512_loadu_ps(x + r * ldx + k), x1 = _mm512_loadu_ps(x + r * ldx + k + 16);
#pragma GCC unroll 4
      for (int j = 0; j < NW; ++j) {
        acc[r][j][0] = _mm512_fmadd_ps(x0, lo[j], acc[r][j][0]);
        acc[r][j][1] = _mm512_fmadd_ps(x1, hi[j], acc[r][j][1]);
      }
    }
  }
  float sums[R][NW];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NW; ++j) sums[r][j] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][j][0], acc[r][j][1]));
  Finish<R, NW>(sums, x, ldx, xsum, w, scale, kv, K, y, ldy);
}

#pragma GCC diagnostic pop
#undef KIMI_AVX512

// All N weight rows against R activation rows; `xsum` holds Σx over each row's vector part.
// Four weight rows at a time for one activation row, two for two, one for three or four.
template <int R, bool kWide>
void Rows(const float* x, int64_t ldx, const float* xsum, const uint8_t* w, const float* scale, int64_t N,
          int64_t K, float* y, int64_t ldy) {
  constexpr int NW = R == 1 ? 4 : R == 2 ? 2 : 1;
  const auto pair = kWide ? Tile512<R, NW> : Tile256<R, NW>;
  const auto single = kWide ? Tile512<R, 1> : Tile256<R, 1>;
  int64_t n = 0;
  const uint8_t* end = w + N * K;
  for (; n + NW <= N; n += NW) pair(x, ldx, xsum, w + n * K, end, scale + n, K, y + n, ldy);
  for (; n < N; ++n) single(x, ldx, xsum, w + n * K, end, scale + n, K, y + n, ldy);
}

struct Int8Packer {
  const uint8_t* w;
  const float* scale;
  int64_t K;
  void Pack(int64_t n0, int64_t rows, int64_t k0, int64_t kc, float* dst) const {
    PackPanels(rows, kc, dst, [&](int64_t n, float* column) {
      const uint8_t* row = w + (n0 + n) * K + k0;
      const float s = scale[n0 + n];
      for (int64_t k = 0; k < kc; ++k) column[k * kNR] = float(int(row[k]) - 128) * s;
    });
  }
};

template <bool kWide>
void GemvInt8Form(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N,
                  int64_t K, float* y, int64_t ldy) {
  // Σx over the columns the tiles take as vectors (the tail is summed exactly per weight row).
  const int64_t kv = kWide ? K / 32 * 32 : K / 16 * 16;
  for (int64_t m = 0; m < M; m += 4) {
    float xsum[4] = {};
    const int64_t rows = std::min<int64_t>(4, M - m);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < kv; ++k) xsum[r] += x[(m + r) * ldx + k];
    }
    const float* xm = x + m * ldx;
    float* ym = y + m * ldy;
    switch (rows) {
      case 4: Rows<4, kWide>(xm, ldx, xsum, w, w_scale, N, K, ym, ldy); break;
      case 3: Rows<3, kWide>(xm, ldx, xsum, w, w_scale, N, K, ym, ldy); break;
      case 2: Rows<2, kWide>(xm, ldx, xsum, w, w_scale, N, K, ym, ldy); break;
      default: Rows<1, kWide>(xm, ldx, xsum, w, w_scale, N, K, ym, ldy); break;
    }
  }
}

}  // namespace

void GemvInt8Form256(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N,
                     int64_t K, float* y, int64_t ldy) {
  GemvInt8Form<false>(x, ldx, w, w_scale, M, N, K, y, ldy);
}

void GemvInt8Form512(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N,
                     int64_t K, float* y, int64_t ldy) {
  GemvInt8Form<true>(x, ldx, w, w_scale, M, N, K, y, ldy);
}

void GemvInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  (cpu::HasAvx512F() ? GemvInt8Form512 : GemvInt8Form256)(x, ldx, w, w_scale, M, N, K, y, ldy);
}

void GemmInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  BlockedGemm(Int8Packer{w, w_scale, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
