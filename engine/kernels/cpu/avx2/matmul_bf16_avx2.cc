// BF16-weight products with AVX2+FMA: a streaming, prefetching GEMV for decode batches and the
// blocked GEMM (gemm_driver_avx2.h) for prefill.
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

// ---- The decode GEMV --------------------------------------------------------------------
//
// Each weight row is read in blocks of 16 BF16 values (one 32-byte load). Seen as 8 lanes of
// 32 bits, lane i holds element 2i in its low half and element 2i+1 in its high half, so one
// shift (even elements) and one mask (odd elements) give 16 fp32 weights without any
// widening shuffle. The activations are rearranged to match once per call: per block of 16,
// the 8 even elements, then the 8 odd ones (PermutedActivations). The sums are the same
// products as the plain loop in a different order.
//
// Decode streams every weight once, so the loop is bound by how fast memory delivers rows.
// k3-mini's rows are short (1–3 KiB): a strip of R rows is R short streams that the hardware
// prefetcher picks up late, one 4 KiB page at a time. Each step therefore prefetches the same
// columns of the strip R rows ahead (for short rows) or the same row 2 KiB ahead (long rows),
// which keeps the next strip's lines in flight while this one is summed (docs/kernels.md).

constexpr int64_t kBlock = 16;

// x rearranged per block of 16 (even elements, then odd); the K % 16 tail stays in place.
const float* PermutedActivations(const float* x, int64_t ldx, int64_t M, int64_t K) {
  float* xp = ThreadScratchArray<float>(ScratchSlot::kC, M * K);
  const int64_t k16 = K - K % kBlock;
  for (int64_t m = 0; m < M; ++m) {
    const float* src = x + m * ldx;
    float* dst = xp + m * K;
    for (int64_t k = 0; k < k16; k += kBlock) {
      const __m256 a = _mm256_loadu_ps(src + k), b = _mm256_loadu_ps(src + k + 8);
      _mm256_storeu_ps(dst + k, EvenElements(a, b));
      _mm256_storeu_ps(dst + k + 8, OddElements(a, b));
    }
    for (int64_t k = k16; k < K; ++k) dst[k] = src[k];
  }
  return xp;
}

// How far ahead (in elements, counted along the row-major matrix) a strip of R rows prefetches.
inline int64_t PrefetchDistance(int R, int64_t K) { return K <= 2048 ? R * K : 1024; }

// R weight rows × MB activation rows: each weight vector is loaded once and used MB times, so
// the weights cross the memory bus once per MB vectors. xp: permuted rows, stride K.
template <int R, int MB>
void GemvTile(const float* xp, const uint16_t* w, int64_t K, int64_t prefetch, float* y, int64_t ldy) {
  const __m256i high_half = _mm256_set1_epi32(int(0xffff0000u));
  const int64_t k16 = K - K % kBlock;
  __m256 acc[R][MB];
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
  for (int64_t k = 0; k < k16; k += kBlock) {
    if (prefetch != 0 && k % (2 * kBlock) == 0) {
      for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(w + r * K + k + prefetch), _MM_HINT_T0);
    }
    for (int r = 0; r < R; ++r) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k));
      const __m256 even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      const __m256 odd = _mm256_castsi256_ps(_mm256_and_si256(v, high_half));
      for (int m = 0; m < MB; ++m) {
        acc[r][m] = _mm256_fmadd_ps(even, _mm256_loadu_ps(xp + m * K + k), acc[r][m]);
        acc[r][m] = _mm256_fmadd_ps(odd, _mm256_loadu_ps(xp + m * K + k + 8), acc[r][m]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int m = 0; m < MB; ++m) {
      float s = HorizontalSum(acc[r][m]);
      for (int64_t k = k16; k < K; ++k) s += Bf16Scalar(w[r * K + k]) * xp[m * K + k];
      y[m * ldy + r] = s;
    }
  }
}

// Rows [0, R) of w for all M activation rows, in tiles of at most 3 activation rows.
template <int R>
void GemvRows(const float* xp, int64_t M, const uint16_t* w, int64_t K, int64_t prefetch, float* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + 3 <= M; m += 3) GemvTile<R, 3>(xp + m * K, w, K, prefetch, y + m * ldy, ldy);
  if (M - m == 2) GemvTile<R, 2>(xp + m * K, w, K, prefetch, y + m * ldy, ldy);
  if (M - m == 1) GemvTile<R, 1>(xp + m * K, w, K, prefetch, y + m * ldy, ldy);
}

// All N rows in strips of R (the last strips narrower); no prefetch past the last full strip.
template <int R>
void GemvStrips(const float* xp, int64_t M, const uint16_t* w, int64_t N, int64_t K, float* y, int64_t ldy) {
  const int64_t distance = PrefetchDistance(R, K);
  int64_t n = 0;
  for (; n + R <= N; n += R) {
    const int64_t prefetch = n + 2 * R <= N || distance < R * K ? distance : 0;
    GemvRows<R>(xp, M, w + n * K, K, prefetch, y + n, ldy);
  }
  for (; n + 4 <= N; n += 4) GemvRows<4>(xp, M, w + n * K, K, 0, y + n, ldy);
  for (; n < N; ++n) GemvRows<1>(xp, M, w + n * K, K, 0, y + n, ldy);
}

// ---- Batch 1 on short rows: strips of 4, prefetched in address order ----------------------
//
// One activation row and rows of at most kLinearPrefetchMaxK values (k3-mini's 1–3 KiB rows).
// A strip of R rows is read column by column, but it prefetches the matrix in address order,
// R lines per step from kLinearPrefetchBytes past the strip's first byte, so the prefetch runs
// ahead of the reads by that distance as one sequential stream. One stream of consecutive
// lines is what the hardware prefetcher follows best, and it ran ahead further than the
// column-wise prefetch of GemvStrips (R separate streams, one line each per step). Best of 15
// passes over k3-mini's 201.6 MB of BF16 matrices in the mapped model file, thread CPU time
// (load 7): 9.9 GB/s with 8-row strips and the column-wise prefetch, 11.8 GB/s like this
// (median 8.8 → 10.6), against 14.8 GB/s for a plain sum; 4-row strips with 6–10 KiB
// distances, T1 or NTA hints, or 3/6-row strips measured the same or lower (docs/kernels.md).
// Each row's sum is the same sequence of FMAs as GemvTile's, so results are bit-identical to
// the other paths (batched decode must match each sequence alone).
constexpr int64_t kLinearPrefetchMaxK = 2048;
constexpr int64_t kLinearPrefetchBytes = 8192;

template <int R>
void GemvOneRowLinearStrip(const float* xp, const uint16_t* w, int64_t K, const char* prefetch,
                           const char* prefetch_end, float* y) {
  const __m256i high_half = _mm256_set1_epi32(int(0xffff0000u));
  const int64_t k16 = K - K % kBlock;
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < k16; k += kBlock) {
    if (k % (2 * kBlock) == 0) {
      for (int r = 0; r < R; ++r, prefetch += 64) {
        if (prefetch < prefetch_end) _mm_prefetch(prefetch, _MM_HINT_T0);
      }
    }
    const __m256 x_even = _mm256_loadu_ps(xp + k), x_odd = _mm256_loadu_ps(xp + k + 8);
    for (int r = 0; r < R; ++r) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k));
      acc[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(v, 16)), x_even, acc[r]);
      acc[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(v, high_half)), x_odd, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = HorizontalSum(acc[r]);
    for (int64_t k = k16; k < K; ++k) s += Bf16Scalar(w[r * K + k]) * xp[k];
    y[r] = s;
  }
}

void GemvOneRowLinearPrefetch(const float* xp, const uint16_t* w, int64_t N, int64_t K, float* y) {
  constexpr int R = 4;
  const char* end = reinterpret_cast<const char*>(w + N * K);
  int64_t n = 0;
  for (; n + R <= N; n += R) {
    const uint16_t* strip = w + n * K;
    GemvOneRowLinearStrip<R>(xp, strip, K, reinterpret_cast<const char*>(strip) + kLinearPrefetchBytes, end, y + n);
  }
  for (; n < N; ++n) GemvOneRowLinearStrip<1>(xp, w + n * K, K, end, end, y + n);
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
  const float* xp = PermutedActivations(x, ldx, M, K);
  // One activation row: 8 weight rows per strip (8 independent sums); more rows: 4 × up to 3
  // accumulators (12 of AVX2's 16 registers).
  if (M == 1 && K <= kLinearPrefetchMaxK) {
    GemvOneRowLinearPrefetch(xp, w, N, K, y);
  } else if (M == 1) {
    GemvStrips<8>(xp, M, w, N, K, y, ldy);
  } else {
    GemvStrips<4>(xp, M, w, N, K, y, ldy);
  }
}

void GemmBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  BlockedGemm(Bf16Packer{w, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
