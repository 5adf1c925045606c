// The fp32 × fp32 product of kernel_table.h (GemmF32Fn) for the small products inside other
// kernels (the chunked KDA's, at most a few hundred rows and columns). Unlike the weight GEMM
// (gemm_driver_avx2.h) nothing is packed: B is read in place, a panel of it (K × 32 floats,
// 16 KiB at K = 128) staying in L1 while the row tiles of A pass over it, and A's elements are
// broadcast from wherever its strides put them, so a transposed A costs nothing. Tiles: 12 rows
// × 32 columns in 512-bit registers (24 accumulators) where GemmRegisterWidth() is 512, else
// 6 × 16 in 256-bit ones; ragged edges are masked, never padded.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_width_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

struct Operands {
  const float* a;
  int64_t a_row, a_col;
  const float* b;
  int64_t ldb, K;
  float alpha, beta;
  const float* c_row_scale;  // nullptr: every row takes beta
  float* c;
  int64_t ldc;

  // The operands of the tile whose top-left element of C is (m0, n0).
  Operands At(int64_t m0, int64_t n0) const {
    Operands t = *this;
    t.a += m0 * a_row;
    t.b += n0;
    if (c_row_scale != nullptr) t.c_row_scale += m0;
    t.c += m0 * ldc + n0;
    return t;
  }
  // Row r's factor on C's old contents.
  float RowBeta(int r) const { return c_row_scale != nullptr ? beta * c_row_scale[r] : beta; }
};

// Rows per tile for M rows and tiles of at most max_rows: as many tiles as max_rows needs, their
// rows spread evenly (M = 16 in tiles of 12 gives 8 + 8, not 12 + a 4-row tile that keeps too
// few accumulators busy to hide the FMA latency).
inline int64_t EvenTileRows(int64_t M, int64_t max_rows) {
  const int64_t tiles = (M + max_rows - 1) / max_rows;
  return (M + tiles - 1) / tiles;
}

// ---- 256-bit tiles: MR rows × 16 columns --------------------------------------------------

constexpr int64_t kMR256 = 6, kNR256 = 16;

inline __m256i ColumnMask(int64_t cols) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(cols, 0, 8))), iota);
}

// Rows [0, MR) and columns [0, ncols <= 16) of C from the operands' origin.
template <int MR>
void Tile256(const Operands& o, int64_t ncols) {
  const __m256i m0 = ColumnMask(ncols), m1 = ColumnMask(ncols - 8);
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < o.K; ++k) {
    const float* bk = o.b + k * o.ldb;
    const __m256 b0 = _mm256_maskload_ps(bk, m0), b1 = _mm256_maskload_ps(bk + 8, m1);
    const float* ak = o.a + k * o.a_col;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(ak + r * o.a_row);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
  const __m256 alpha = _mm256_set1_ps(o.alpha);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* cr = o.c + r * o.ldc;
    __m256 y0 = _mm256_mul_ps(alpha, acc0[r]), y1 = _mm256_mul_ps(alpha, acc1[r]);
    const float row_beta = o.RowBeta(r);
    if (row_beta != 0.0f) {
      const __m256 beta = _mm256_set1_ps(row_beta);
      y0 = _mm256_fmadd_ps(beta, _mm256_maskload_ps(cr, m0), y0);
      y1 = _mm256_fmadd_ps(beta, _mm256_maskload_ps(cr + 8, m1), y1);
    }
    _mm256_maskstore_ps(cr, m0, y0);
    _mm256_maskstore_ps(cr + 8, m1, y1);
  }
}

using Tile256Fn = void (*)(const Operands&, int64_t);
template <int... MR>
constexpr std::array<Tile256Fn, kMR256 + 1> Tiles256(std::integer_sequence<int, MR...>) {
  return {nullptr, Tile256<MR + 1>...};
}

void Gemm256(const Operands& o, int64_t M, int64_t N) {
  static constexpr auto kTiles = Tiles256(std::make_integer_sequence<int, kMR256>{});
  for (int64_t n0 = 0; n0 < N; n0 += kNR256) {
    const int64_t mr = EvenTileRows(M, kMR256);
    for (int64_t m0 = 0; m0 < M; m0 += mr) kTiles[std::min(mr, M - m0)](o.At(m0, n0), std::min(kNR256, N - n0));
  }
}

// ---- 512-bit tiles (AVX-512F): MR rows × 16·NV columns ------------------------------------
#define KIMI_AVX512 gnu::target("avx512f")
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

constexpr int64_t kMR512 = 12, kNR512 = 32;

template <int MR, int NV>
[[gnu::noinline, KIMI_AVX512]] void Tile512(const Operands& o, int64_t ncols) {
  __mmask16 mask[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const int64_t cols = std::clamp<int64_t>(ncols - 16 * v, 0, 16);
    mask[v] = static_cast<__mmask16>((1u << cols) - 1);
  }
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < o.K; ++k) {
    const float* bk = o.b + k * o.ldb;
    __m512 b[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) b[v] = _mm512_maskz_loadu_ps(mask[v], bk + 16 * v);
    const float* ak = o.a + k * o.a_col;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(ak[r * o.a_row]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, b[v], acc[r][v]);
    }
  }
  const __m512 alpha = _mm512_set1_ps(o.alpha);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const float row_beta = o.RowBeta(r);
    const __m512 beta = _mm512_set1_ps(row_beta);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      float* cr = o.c + r * o.ldc + 16 * v;
      __m512 y = _mm512_mul_ps(alpha, acc[r][v]);
      if (row_beta != 0.0f) y = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask[v], cr), y);
      _mm512_mask_storeu_ps(cr, mask[v], y);
    }
  }
}

using Tile512Fn = void (*)(const Operands&, int64_t);
template <int NV, int... MR>
constexpr std::array<Tile512Fn, kMR512 + 1> Tiles512(std::integer_sequence<int, MR...>) {
  return {nullptr, Tile512<MR + 1, NV>...};
}

#pragma GCC diagnostic pop
#undef KIMI_AVX512

void Gemm512(const Operands& o, int64_t M, int64_t N) {
  static constexpr auto kOne = Tiles512<1>(std::make_integer_sequence<int, kMR512>{});
  static constexpr auto kTwo = Tiles512<2>(std::make_integer_sequence<int, kMR512>{});
  for (int64_t n0 = 0; n0 < N; n0 += kNR512) {
    const int64_t ncols = std::min(kNR512, N - n0);
    const auto& tiles = ncols > 16 ? kTwo : kOne;
    const int64_t mr = EvenTileRows(M, kMR512);
    for (int64_t m0 = 0; m0 < M; m0 += mr) tiles[std::min(mr, M - m0)](o.At(m0, n0), ncols);
  }
}

}  // namespace

void GemmF32(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M, int64_t N,
             int64_t K, float alpha, float beta, const float* c_row_scale, float* c, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  const Operands o{a, a_row, a_col, b, ldb, K, alpha, beta, c_row_scale, c, ldc};
  if (GemmRegisterWidth() == 512) {
    Gemm512(o, M, N);
  } else {
    Gemm256(o, M, N);
  }
}

}  // namespace kimi::kernels::avx2
