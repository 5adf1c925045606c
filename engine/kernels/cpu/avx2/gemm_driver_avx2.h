// The blocked fp32 GEMM behind the prefill products: Y[M, N] = X[M, K] · Wᵀ with W [N, K] in
// any storage format. A Packer converts a block of W (NC rows × KC columns) to fp32 panels of
// 16 output columns laid out [k][16]; a 6×16 register tile (12 accumulators) then runs over
// each panel with X read in place. KC = 256, NC = 128 keep a packed block (128 KiB) in L2 and
// one panel (16 KiB) plus six X rows (6 KiB) in L1.
//
// Packer::Pack(n0, rows, k0, kc, dst) writes ceil(rows/16) panels of kc×16 floats,
// zero-padding rows past `rows`. Internal to the AVX2 translation units.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kMR = 6, kNR = 16, kKC = 256, kNC = 128;

// C[MR, 16] (+)= A[MR, kc] · Bp[kc, 16]; only the first `ncols` columns are written.
template <int MR>
void MicroKernel(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc,
                 bool accumulate, int64_t ncols) {
  __m256 acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0 = _mm256_load_ps(bp + k * kNR);
    __m256 b1 = _mm256_load_ps(bp + k * kNR + 8);
    for (int r = 0; r < MR; ++r) {
      __m256 av = _mm256_broadcast_ss(a + r * lda + k);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  if (ncols == kNR) {
    for (int r = 0; r < MR; ++r) {
      float* cr = c + r * ldc;
      if (accumulate) {
        acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(cr));
        acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(cr + 8));
      }
      _mm256_storeu_ps(cr, acc[r][0]);
      _mm256_storeu_ps(cr + 8, acc[r][1]);
    }
    return;
  }
  alignas(32) float tmp[kNR];
  for (int r = 0; r < MR; ++r) {
    _mm256_store_ps(tmp, acc[r][0]);
    _mm256_store_ps(tmp + 8, acc[r][1]);
    float* cr = c + r * ldc;
    for (int64_t j = 0; j < ncols; ++j) cr[j] = accumulate ? cr[j] + tmp[j] : tmp[j];
  }
}

using MicroKernelFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, bool, int64_t);
constexpr MicroKernelFn kMicroKernels[kMR + 1] = {nullptr, MicroKernel<1>, MicroKernel<2>, MicroKernel<3>,
                                                  MicroKernel<4>, MicroKernel<5>, MicroKernel<6>};

template <class Packer>
void BlockedGemm(const Packer& packer, const float* x, int64_t ldx, int64_t M, int64_t N, int64_t K,
                 float* y, int64_t ldy) {
  float* packed = ThreadScratchArray<float>(ScratchSlot::kA, kNC * kKC);  // 64-byte aligned
  for (int64_t n0 = 0; n0 < N; n0 += kNC) {
    const int64_t nc = std::min(kNC, N - n0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      packer.Pack(n0, nc, k0, kc, packed);
      for (int64_t m0 = 0; m0 < M; m0 += kMR) {
        const int64_t mr = std::min(kMR, M - m0);
        for (int64_t p = 0; p * kNR < nc; ++p) {
          kMicroKernels[mr](x + m0 * ldx + k0, ldx, packed + p * kc * kNR, kc, y + m0 * ldy + n0 + p * kNR,
                            ldy, k0 > 0, std::min(kNR, nc - p * kNR));
        }
      }
    }
  }
}

}  // namespace
}  // namespace kimi::kernels::avx2
