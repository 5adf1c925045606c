// The vector primitives of the chunked KDA (kda_chunk.h) in 256-bit registers, for the
// translation units that instantiate it: kda_avx2.cc (AVX2+FMA) and kda_avx512.cc, whose
// 512-bit primitives replace some of these. Everything is internal to the including unit, which
// compiles it with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

inline void ExpArray(const float* x, float* out, int64_t n) {
  Map8(x, n, out, [](__m256 v) { return Exp8(v); });
}

// Rows x[0..8) become columns.
inline void Transpose8x8(__m256 x[8]) {
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(x[2 * i], x[2 * i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    x[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    x[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

struct Avx2Ops {
  static constexpr GemmF32Fn Gemm = GemmF32;
  // As asm volatile: GCC finds a function of nothing but _mm_prefetch free of side effects and
  // deletes its calls once inlined (every prefetch of this kernel was gone from the binary).
  static void Prefetch(const void* p, int64_t bytes) {
    const char* line = static_cast<const char*>(p);
    for (int64_t off = 0; off < bytes; off += 64) asm volatile("prefetcht1 %0" : : "m"(line[off]));
  }
  // 32 columns at a time held in registers across the whole sum over rows.
  static void CombineRows(float* out, float out_scale, float alpha, const float* coeffs, int64_t coeff_stride,
                          const float* rows, int64_t row_stride, int64_t count, int64_t n) {
    const __m256 vs = _mm256_set1_ps(out_scale), va = _mm256_set1_ps(alpha);
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
      __m256 acc[4];
      for (int u = 0; u < 4; ++u) acc[u] = _mm256_setzero_ps();
      for (int64_t i = 0; i < count; ++i) {
        const __m256 c = _mm256_broadcast_ss(coeffs + i * coeff_stride);
        const float* r = rows + i * row_stride + j;
        for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(c, _mm256_loadu_ps(r + 8 * u), acc[u]);
      }
      for (int u = 0; u < 4; ++u) {
        __m256 base = out_scale == 0.0f ? _mm256_setzero_ps() : _mm256_mul_ps(vs, _mm256_loadu_ps(out + j + 8 * u));
        _mm256_storeu_ps(out + j + 8 * u, _mm256_fmadd_ps(va, acc[u], base));
      }
    }
    for (; j + 8 <= n; j += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t i = 0; i < count; ++i)
        acc = _mm256_fmadd_ps(_mm256_broadcast_ss(coeffs + i * coeff_stride), _mm256_loadu_ps(rows + i * row_stride + j), acc);
      __m256 base = out_scale == 0.0f ? _mm256_setzero_ps() : _mm256_mul_ps(vs, _mm256_loadu_ps(out + j));
      _mm256_storeu_ps(out + j, _mm256_fmadd_ps(va, acc, base));
    }
    for (; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < count; ++i) acc += coeffs[i * coeff_stride] * rows[i * row_stride + j];
      out[j] = (out_scale == 0.0f ? 0.0f : out_scale * out[j]) + alpha * acc;
    }
  }
  static void Exp(const float* x, float* out, int64_t n) { ExpArray(x, out, n); }
  // step(d, load, store) over lanes [d, d + 8) of rows of n: loaded whole, then the ragged end
  // through a buffer (its missing lanes read as 0).
  template <class Step>
  static void ForLanes(int64_t n, Step step) {
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
      step(d, [](const float* p) { return _mm256_loadu_ps(p); }, [](float* p, __m256 v) { _mm256_storeu_ps(p, v); });
    }
    if (d < n) {
      const int64_t r = n - d;
      step(d, [r](const float* p) { return LoadPartial(p, r, 0.0f); }, [r](float* p, __m256 v) { StorePartial(p, r, v); });
    }
  }
  // ka, qa, kg and qg at lanes [d, d + 8); returns f = e^{Gt−Gp} there.
  template <class Load, class Store>
  static __m256 DecayedForms(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                             int64_t d, Load load, Store store, float* ka, float* qa, float* kg, float* qg) {
    const __m256 f = Exp8(_mm256_sub_ps(load(Gt + d), load(Gp + d)));
    const __m256 kav = _mm256_mul_ps(load(k + d), f), qav = _mm256_mul_ps(load(q + d), f), e = load(eGp + d);
    store(ka + d, kav);
    store(qa + d, qav);
    store(kg + d, _mm256_mul_ps(kav, e));
    store(qg + d, _mm256_mul_ps(qav, e));
    return f;
  }
  static void DecayRow(const float* k, const float* q, const float* Gt, const float* Gp, const float* Ge,
                       const float* eGp, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kend) {
    ForLanes(n, [&](int64_t d, auto load, auto store) {
      DecayedForms(k, q, Gt, Gp, eGp, d, load, store, ka, qa, kg, qg);
      store(kend + d, _mm256_mul_ps(load(k + d), Exp8(_mm256_sub_ps(load(Ge + d), load(Gt + d)))));
    });
  }
  // The missing lanes of a ragged end have f = e^0 = 1, so the division stays finite there.
  static void DecayRowFactored(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                               const float* eGep, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kx,
                               float* kend) {
    ForLanes(n, [&](int64_t d, auto load, auto store) {
      const __m256 f = DecayedForms(k, q, Gt, Gp, eGp, d, load, store, ka, qa, kg, qg);
      const __m256 kxv = _mm256_div_ps(load(k + d), f);
      store(kx + d, kxv);
      store(kend + d, _mm256_mul_ps(kxv, load(eGep + d)));
    });
  }
  // 8 × 8 blocks transposed in registers; the ragged edges element by element.
  static void Transpose(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
    const int64_t rows8 = rows - rows % 8, cols8 = cols - cols % 8;
    for (int64_t r = 0; r < rows8; r += 8) {
      for (int64_t c = 0; c < cols8; c += 8) {
        __m256 x[8];
        for (int i = 0; i < 8; ++i) x[i] = _mm256_loadu_ps(src + (r + i) * ld_src + c);
        Transpose8x8(x);
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (c + i) * ld_dst + r, x[i]);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = r < rows8 ? cols8 : 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
    }
  }
  static void DecayedDots(const float* qt, const float* kt, const float* ki, const float* Gt,
                          const float* Gi, int64_t n, float* qk, float* kk) {
    __m256 aq = _mm256_setzero_ps(), ak = _mm256_setzero_ps();
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
      __m256 decayed = _mm256_mul_ps(_mm256_loadu_ps(ki + d),
                                     Exp8(_mm256_sub_ps(_mm256_loadu_ps(Gt + d), _mm256_loadu_ps(Gi + d))));
      aq = _mm256_fmadd_ps(_mm256_loadu_ps(qt + d), decayed, aq);
      ak = _mm256_fmadd_ps(_mm256_loadu_ps(kt + d), decayed, ak);
    }
    if (d < n) {
      const int64_t r = n - d;
      __m256 decayed = _mm256_mul_ps(LoadPartial(ki + d, r, 0.0f),
                                     Exp8(_mm256_sub_ps(LoadPartial(Gt + d, r, 0.0f), LoadPartial(Gi + d, r, 0.0f))));
      aq = _mm256_fmadd_ps(LoadPartial(qt + d, r, 0.0f), decayed, aq);
      ak = _mm256_fmadd_ps(LoadPartial(kt + d, r, 0.0f), decayed, ak);
    }
    *qk = HorizontalSum(aq);
    *kk = HorizontalSum(ak);
  }
};

}  // namespace
}  // namespace kimi::kernels::avx2
