// Vectorised fp32 math for the AVX2 kernels: exp, tanh, sigmoid, horizontal sums, and a
// helper that runs an 8-lane function over an array including its tail.
// Only for translation units compiled with -mavx2 -mfma; everything is internal (static).
//
// Accuracy (checked by vec_math_avx2_test.cc against libm over wide ranges):
//   Exp: relative error < 4e-7 on [−87, 88]; inputs below −87.3 give ~1e-38 instead of less.
//   Tanh: absolute error < 3e-7, relative < 1e-6 (Taylor series below |x| = 0.3, exp form above).
//   Sigmoid: relative error < 1e-6.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace kimi::kernels::avx2 {

// The lane operations of ExpOf on 8 lanes; kda_avx512.cc has them on 16 (in a file compiled for
// AVX-512F), so that both widths run the one algorithm and give the same bits.
struct Lanes8 {
  using V = __m256;
  static __m256 Set(float x) { return _mm256_set1_ps(x); }
  static __m256 Clamp(__m256 x, float lo, float hi) { return _mm256_min_ps(_mm256_max_ps(x, Set(lo)), Set(hi)); }
  static __m256 RoundedProduct(__m256 x, float c) {
    return _mm256_round_ps(_mm256_mul_ps(x, Set(c)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static __m256 Fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256 Fnma(__m256 a, __m256 b, __m256 c) { return _mm256_fnmadd_ps(a, b, c); }
  // p·2^n for integral n in the normal range.
  static __m256 TimesPowerOfTwo(__m256 p, __m256 n) {
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
};

template <class L, class V = typename L::V>
static inline V ExpOf(V x) {
  x = L::Clamp(x, -87.3f, 88.0f);
  const V n = L::RoundedProduct(x, 1.44269504088896341f);
  // r = x − n·ln2 in two steps (Cody–Waite) so r keeps its low bits.
  V r = L::Fnma(n, L::Set(0.693359375f), x);
  r = L::Fnma(n, L::Set(-2.12194440e-4f), r);
  // e^r on |r| <= ln2/2 by its Taylor series to degree 7 (remainder < 6e-9).
  V p = L::Set(1.0f / 5040.0f);
  for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f}) p = L::Fma(p, r, L::Set(c));
  return L::TimesPowerOfTwo(p, n);
}

static inline __m256 Exp8(__m256 x) { return ExpOf<Lanes8>(x); }

static inline __m256 Sigmoid8(__m256 x) {
  __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, Exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

static inline __m256 Tanh8(__m256 x) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(sign_mask, x);
  // Large |x|: (1 − e^{−2|x|}) / (1 + e^{−2|x|}), no overflow.
  __m256 e = Exp8(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  __m256 one = _mm256_set1_ps(1.0f);
  __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  // Small |x|: x − x³/3 + 2x⁵/15 − 17x⁷/315 + 62x⁹/2835 (next term < 6e-8 relative at 0.3).
  __m256 x2 = _mm256_mul_ps(ax, ax);
  __m256 p = _mm256_set1_ps(62.0f / 2835.0f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 3.0f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), ax, ax);
  __m256 use_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.3f), _CMP_LT_OQ);
  __m256 mag = _mm256_blendv_ps(big, small, use_small);
  return _mm256_or_ps(mag, _mm256_and_ps(x, sign_mask));
}

static inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline float HorizontalMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Loads n < 8 floats (the rest `fill`) / stores the first n lanes.
static inline __m256 LoadPartial(const float* p, int64_t n, float fill) {
  alignas(32) float buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = i < n ? p[i] : fill;
  return _mm256_load_ps(buf);
}
static inline void StorePartial(float* p, int64_t n, __m256 v) {
  alignas(32) float buf[8];
  _mm256_store_ps(buf, v);
  for (int64_t i = 0; i < n; ++i) p[i] = buf[i];
}

// out[i] = f(x[i]) lane-wise over n elements, tail included.
template <typename F>
static inline void Map8(const float* x, int64_t n, float* out, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) StorePartial(out + i, n - i, f(LoadPartial(x + i, n - i, 0.0f)));
}

// With lo = x0..x7 and hi = x8..x15: the 8 even elements x0 x2 .. x14 / the 8 odd elements
// x1 x3 .. x15, in order (the layouts the decode GEMVs want their activations in).
static inline __m256 EvenElements(__m256 lo, __m256 hi) {
  const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));  // x0 x2 x8 x10 | x4 x6 x12 x14
  return _mm256_permutevar8x32_ps(e, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}
static inline __m256 OddElements(__m256 lo, __m256 hi) {
  const __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_permutevar8x32_ps(o, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}

// BF16 bits → fp32 for 8 values.
static inline __m256 LoadBf16x8(const uint16_t* p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline float Bf16Scalar(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace kimi::kernels::avx2
