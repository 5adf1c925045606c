// The blocked fp32 GEMM behind the prefill products: Y[M, N] = X[M, K] · Wᵀ with W [N, K] in
// any storage format. A Packer converts a block of W (NC rows × KC columns) to fp32 panels of
// 16 output columns laid out [k][16]; a 6×16 register tile (12 accumulators) then runs over
// each panel with X read in place (fewer than 6 rows: a row at a time). KC = 256, NC = 128 keep a packed block (128 KiB) in L2 and
// one panel (16 KiB) plus six X rows (6 KiB) in L1.
//
// Where the CPU has AVX-512F (and GemmRegisterWidth() says 512), a 12×32 tile in 512-bit
// registers (24 accumulators, one register per row of a 16-column panel, two panels side by
// side) takes the place of the 6×16 one: each output element gets the same FMAs in the same
// k order, the same KC blocking and the same "C + block sum" between blocks, so the two forms
// give the same bits; a 512-bit FMA does twice the work of a 256-bit one at the same issue
// rate on this machine's cores (docs/kernels.md). Its two panels (32 KiB) and twelve X rows
// (12 KiB) still fit a 48 KiB L1.
//
// Packer::Pack(n0, rows, k0, kc, dst) writes ceil(rows/16) panels of kc×16 floats,
// zero-padding rows past `rows`. Internal to the AVX2 translation units.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/avx2/gemm_width_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kMR = 6, kNR = 16, kKC = 256, kNC = 128;

// The panel walk every Packer shares: weight row n of the block (0 <= n < rows) goes to column
// n % kNR of panel n / kNR, and fill_row(n, column) writes its kc values at column[k * kNR]; the
// columns of the last panel past `rows` are zeros.
template <class FillRow>
void PackPanels(int64_t rows, int64_t kc, float* dst, FillRow&& fill_row) {
  for (int64_t p = 0; p * kNR < rows; ++p) {
    float* panel = dst + p * kc * kNR;
    for (int64_t j = 0; j < kNR; ++j) {
      const int64_t n = p * kNR + j;
      if (n < rows) {
        fill_row(n, panel + j);
      } else {
        for (int64_t k = 0; k < kc; ++k) panel[k * kNR + j] = 0.0f;
      }
    }
  }
}

// Writes a finished tile row: C (+)= acc, only the first `ncols` columns.
inline void StoreTileRow(float* cr, __m256 a0, __m256 a1, bool accumulate, int64_t ncols) {
  if (ncols == kNR) {
    if (accumulate) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(cr));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(cr + 8));
    }
    _mm256_storeu_ps(cr, a0);
    _mm256_storeu_ps(cr + 8, a1);
    return;
  }
  alignas(32) float tmp[kNR];
  _mm256_store_ps(tmp, a0);
  _mm256_store_ps(tmp + 8, a1);
  for (int64_t j = 0; j < ncols; ++j) cr[j] = accumulate ? cr[j] + tmp[j] : tmp[j];
}

// C[6, 16] (+)= A[6, kc] · Bp[kc, 16]: twelve named accumulators, so the compiler keeps them
// in registers (with an array of __m256 GCC 12 stored all twelve to the stack every k step,
// halving the speed).
void MicroKernel6(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc,
                  bool accumulate, int64_t ncols) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda, *a4 = a + 4 * lda, *a5 = a + 5 * lda;
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(bp + k * kNR);
    const __m256 b1 = _mm256_load_ps(bp + k * kNR + 8);
    __m256 av = _mm256_broadcast_ss(a0 + k);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a1 + k);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a2 + k);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a3 + k);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a4 + k);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a5 + k);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
  }
  StoreTileRow(c, c00, c01, accumulate, ncols);
  StoreTileRow(c + ldc, c10, c11, accumulate, ncols);
  StoreTileRow(c + 2 * ldc, c20, c21, accumulate, ncols);
  StoreTileRow(c + 3 * ldc, c30, c31, accumulate, ncols);
  StoreTileRow(c + 4 * ldc, c40, c41, accumulate, ncols);
  StoreTileRow(c + 5 * ldc, c50, c51, accumulate, ncols);
}

// The M tail (fewer than 6 rows): one row of A at a time over the panel.
template <int MR>
void MicroKernel(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc,
                 bool accumulate, int64_t ncols) {
  for (int r = 0; r < MR; ++r) {
    __m256 c0 = _mm256_setzero_ps(), c1 = c0;
    const float* ar = a + r * lda;
    for (int64_t k = 0; k < kc; ++k) {
      const __m256 av = _mm256_broadcast_ss(ar + k);
      c0 = _mm256_fmadd_ps(av, _mm256_load_ps(bp + k * kNR), c0);
      c1 = _mm256_fmadd_ps(av, _mm256_load_ps(bp + k * kNR + 8), c1);
    }
    StoreTileRow(c + r * ldc, c0, c1, accumulate, ncols);
  }
}

using MicroKernelFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, bool, int64_t);
using MicroKernel512Fn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t, bool,
                                  int64_t);
constexpr MicroKernelFn kMicroKernels[kMR + 1] = {nullptr, MicroKernel<1>, MicroKernel<2>, MicroKernel<3>,
                                                  MicroKernel<4>, MicroKernel<5>, MicroKernel6};

// ---- The 512-bit tile (AVX-512F) ------------------------------------------------------------
#define KIMI_AVX512 gnu::target("avx512f")
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

constexpr int64_t kMR512 = 12;

// Writes a finished 512-bit tile: C[MR, ncols] (+)= acc, row r's register v holding columns
// [16·v, 16·v + 16); only the first `ncols` (<= 16·NV) columns are touched.
template <int MR, int NV>
[[gnu::always_inline, KIMI_AVX512]] inline void StoreTile512(const __m512 (&acc)[MR][NV], float* c, int64_t ldc,
                                                             bool accumulate, int64_t ncols) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const int64_t cols = std::min<int64_t>(kNR, ncols - v * kNR);
      float* cr = c + r * ldc + v * kNR;
      const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1);
      __m512 out = acc[r][v];
      if (accumulate) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, cr));
      _mm512_mask_storeu_ps(cr, mask, out);
    }
  }
}

// C[MR, 16·NV] (+)= A[MR, kc] · (NV panels side by side): acc[r][v] is row r's register for
// panel v, taking fma(a[r, k], panel v's row k) for k = 0, 1, ... as the 256-bit tile does.
// `ncols` (<= 16·NV) columns are stored.
template <int MR, int NV>
[[gnu::noinline, KIMI_AVX512]] void MicroKernel512(const float* a, int64_t lda, const float* bp,
                                                   int64_t panel_stride, int64_t kc, float* c, int64_t ldc,
                                                   bool accumulate, int64_t ncols) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) b[v] = _mm512_load_ps(bp + v * panel_stride + k * kNR);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, b[v], acc[r][v]);
    }
  }
  StoreTile512<MR, NV>(acc, c, ldc, accumulate, ncols);
}

template <int NV, int... MR>
constexpr std::array<MicroKernel512Fn, kMR512 + 1> MicroKernels512(std::integer_sequence<int, MR...>) {
  return {nullptr, MicroKernel512<MR + 1, NV>...};
}

#pragma GCC diagnostic pop
#undef KIMI_AVX512

// The tile loop over one packed block (nc columns, kc values of k) for the rows [0, M): 12 rows
// × 2 panels at a time (1 panel for the last of an odd count). `two` and `one` hold the tiles by
// row count; T is the element type of the activations and the panels (floats here, BF16 pairs
// in matmul_bf16_dot_avx512.cc), each panel kc·kNR of them.
template <class T, class TileFn>
void TileBlock512(const std::array<TileFn, kMR512 + 1>& two, const std::array<TileFn, kMR512 + 1>& one,
                  const T* x, int64_t ldx, int64_t M, const T* packed, int64_t nc, int64_t kc, float* y, int64_t ldy,
                  bool accumulate) {
  const int64_t panel_stride = kc * kNR;
  for (int64_t m0 = 0; m0 < M; m0 += kMR512) {
    const int64_t mr = std::min(kMR512, M - m0);
    for (int64_t j = 0; j < nc; j += 2 * kNR) {
      const TileFn fn = nc - j > kNR ? two[mr] : one[mr];
      fn(x + m0 * ldx, ldx, packed + j / kNR * panel_stride, panel_stride, kc, y + m0 * ldy + j, ldy, accumulate,
         std::min(2 * kNR, nc - j));
    }
  }
}

inline void Block512(const float* x, int64_t ldx, int64_t M, const float* packed, int64_t nc, int64_t kc,
                     float* y, int64_t ldy, bool accumulate) {
  static constexpr auto kTwo = MicroKernels512<2>(std::make_integer_sequence<int, kMR512>{});
  static constexpr auto kOne = MicroKernels512<1>(std::make_integer_sequence<int, kMR512>{});
  TileBlock512(kTwo, kOne, x, ldx, M, packed, nc, kc, y, ldy, accumulate);
}

// The tile loop over one packed block in 256-bit registers.
inline void Block256(const float* x, int64_t ldx, int64_t M, const float* packed, int64_t nc, int64_t kc,
                     float* y, int64_t ldy, bool accumulate) {
  for (int64_t m0 = 0; m0 < M; m0 += kMR) {
    const int64_t mr = std::min(kMR, M - m0);
    for (int64_t p = 0; p * kNR < nc; ++p) {
      kMicroKernels[mr](x + m0 * ldx, ldx, packed + p * kc * kNR, kc, y + m0 * ldy + p * kNR, ldy, accumulate,
                        std::min(kNR, nc - p * kNR));
    }
  }
}

template <class Packer>
void BlockedGemm(const Packer& packer, const float* x, int64_t ldx, int64_t M, int64_t N, int64_t K,
                 float* y, int64_t ldy) {
  const auto block = GemmRegisterWidth() == 512 ? Block512 : Block256;
  float* packed = ThreadScratchArray<float>(ScratchSlot::kA, kNC * kKC);  // 64-byte aligned
  for (int64_t n0 = 0; n0 < N; n0 += kNC) {
    const int64_t nc = std::min(kNC, N - n0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      packer.Pack(n0, nc, k0, kc, packed);
      block(x + k0, ldx, M, packed, nc, kc, y + n0, ldy, k0 > 0);
    }
  }
}

}  // namespace
}  // namespace kimi::kernels::avx2
