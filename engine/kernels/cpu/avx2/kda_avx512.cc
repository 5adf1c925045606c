// The chunked KDA (kda_chunk.h) with its element-wise steps in 512-bit registers: the decayed
// rows (two exponentials per element), the exponentials of the per-block decays, the forward
// substitution's row sums and the scalings take half the instructions of the 256-bit form, and
// this whole file is compiled for AVX-512F so that the algorithm's own loops (cumulative gates,
// decay differences, row products) are vectorised at that width too. The products stay on
// GemmF32. Every lane computes what the 256-bit form computes, in the same order, so the two
// give the same bits (KdaTest.TheFormsGiveTheSameBits).
//
// Compiled with -mavx512f; KdaChunked calls it only where cpu::HasAvx512F().
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/kda_ops_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/kda_chunk.h"

// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace kimi::kernels::avx2 {

namespace {

// ExpOf's lane operations (vec_math_avx2.h) on 16 lanes.
struct Lanes16 {
  using V = __m512;
  static __m512 Set(float x) { return _mm512_set1_ps(x); }
  static __m512 Clamp(__m512 x, float lo, float hi) { return _mm512_min_ps(_mm512_max_ps(x, Set(lo)), Set(hi)); }
  static __m512 RoundedProduct(__m512 x, float c) {
    return _mm512_roundscale_ps(_mm512_mul_ps(x, Set(c)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static __m512 Fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static __m512 Fnma(__m512 a, __m512 b, __m512 c) { return _mm512_fnmadd_ps(a, b, c); }
  static __m512 TimesPowerOfTwo(__m512 p, __m512 n) {
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  }
};

inline __m512 Exp16(__m512 x) { return ExpOf<Lanes16>(x); }

// The first `lanes` (<= 16) lanes.
inline __mmask16 Lanes(int64_t lanes) { return static_cast<__mmask16>((1u << lanes) - 1u); }

struct Avx512Ops : Avx2Ops {
  static void Exp(const float* x, float* out, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = Lanes(std::min<int64_t>(16, n - i));
      _mm512_mask_storeu_ps(out + i, m, Exp16(_mm512_maskz_loadu_ps(m, x + i)));
    }
  }
  // ka, qa, kg and qg at the lanes m of [d, d + 16); returns f = e^{Gt−Gp} there.
  static __m512 DecayedForms(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                             int64_t d, __mmask16 m, float* ka, float* qa, float* kg, float* qg) {
    const __m512 f = Exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, Gt + d), _mm512_maskz_loadu_ps(m, Gp + d)));
    const __m512 kav = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, k + d), f);
    const __m512 qav = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, q + d), f), e = _mm512_maskz_loadu_ps(m, eGp + d);
    _mm512_mask_storeu_ps(ka + d, m, kav);
    _mm512_mask_storeu_ps(qa + d, m, qav);
    _mm512_mask_storeu_ps(kg + d, m, _mm512_mul_ps(kav, e));
    _mm512_mask_storeu_ps(qg + d, m, _mm512_mul_ps(qav, e));
    return f;
  }
  static void DecayRow(const float* k, const float* q, const float* Gt, const float* Gp, const float* Ge,
                       const float* eGp, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kend) {
    for (int64_t d = 0; d < n; d += 16) {
      const __mmask16 m = Lanes(std::min<int64_t>(16, n - d));
      auto load = [m](const float* p) { return _mm512_maskz_loadu_ps(m, p); };
      DecayedForms(k, q, Gt, Gp, eGp, d, m, ka, qa, kg, qg);
      _mm512_mask_storeu_ps(kend + d, m, _mm512_mul_ps(load(k + d), Exp16(_mm512_sub_ps(load(Ge + d), load(Gt + d)))));
    }
  }
  static void DecayRowFactored(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                               const float* eGep, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kx,
                               float* kend) {
    for (int64_t d = 0; d < n; d += 16) {
      const __mmask16 m = Lanes(std::min<int64_t>(16, n - d));
      const __m512 f = DecayedForms(k, q, Gt, Gp, eGp, d, m, ka, qa, kg, qg);
      const __m512 kxv = _mm512_maskz_div_ps(m, _mm512_maskz_loadu_ps(m, k + d), f);
      _mm512_mask_storeu_ps(kx + d, m, kxv);
      _mm512_mask_storeu_ps(kend + d, m, _mm512_mul_ps(kxv, _mm512_maskz_loadu_ps(m, eGep + d)));
    }
  }
  // The columns in blocks of up to 128, one accumulator per 16, held in registers across the
  // whole sum over rows: a row's sums are 8 independent chains, so the FMAs' latency hides
  // behind one another (with 32 columns at a time the substitution waited on it). Each lane
  // sums in the 256-bit form's order; the last columns past a multiple of 8 are left to it.
  static void CombineRows(float* out, float out_scale, float alpha, const float* coeffs, int64_t coeff_stride,
                          const float* rows, int64_t row_stride, int64_t count, int64_t n) {
    const int64_t vector_cols = n - n % 8;
    for (int64_t j = 0; j < vector_cols; j += 128) {
      CombineBlock(out + j, out_scale, alpha, coeffs, coeff_stride, rows + j, row_stride, count,
                   std::min<int64_t>(128, vector_cols - j));
    }
    if (vector_cols < n) {
      Avx2Ops::CombineRows(out + vector_cols, out_scale, alpha, coeffs, coeff_stride, rows + vector_cols, row_stride,
                           count, n - vector_cols);
    }
  }
  static void CombineBlock(float* out, float out_scale, float alpha, const float* coeffs, int64_t coeff_stride,
                           const float* rows, int64_t row_stride, int64_t count, int64_t cols) {
    constexpr int kVectors = 8;
    __mmask16 m[kVectors];
    __m512 acc[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      m[v] = Lanes(std::clamp<int64_t>(cols - 16 * v, 0, 16));
      acc[v] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < count; ++i) {
      const __m512 c = _mm512_set1_ps(coeffs[i * coeff_stride]);
      const float* r = rows + i * row_stride;
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) acc[v] = _mm512_fmadd_ps(c, _mm512_maskz_loadu_ps(m[v], r + 16 * v), acc[v]);
    }
    const __m512 vs = _mm512_set1_ps(out_scale), va = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      const __m512 base =
          out_scale == 0.0f ? _mm512_setzero_ps() : _mm512_mul_ps(vs, _mm512_maskz_loadu_ps(m[v], out + 16 * v));
      _mm512_mask_storeu_ps(out + 16 * v, m[v], _mm512_fmadd_ps(va, acc[v], base));
    }
  }
};

}  // namespace

void KdaChunkedForm512(const KdaArgs& a) { KdaChunkedHeads<Avx512Ops>(a); }

}  // namespace kimi::kernels::avx2
