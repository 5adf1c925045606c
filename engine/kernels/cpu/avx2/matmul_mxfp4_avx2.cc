// MXFP4-weight products with AVX2+FMA. The decode GEMV (GemvMxfp4Q16, the table's choice)
// takes activations quantised to int16 per block (bounded error, below). GemvMxfp4F32 keeps
// them fp32 and is ~1.4× slower; it decodes each 32-element block in registers:
// nibbles are split and interleaved back into element order, a vpshufb table maps each code
// to twice its E2M1 value as int8 (exact: 0, ±1, ±2, ±3, ±4, ±6, ±8, ±12), the block's dot
// product with x is taken in fp32, and one multiply by 2^(e−128) per block applies the
// shared scale and the halving. Activations stay fp32: nothing is rounded except by the FMAs.
// The GEMM dequantises blocks of W to fp32 panels for the shared blocked driver.
#include <cmath>

#include "kernels/cpu/avx2/avx2.h"
#include "core/cpu_features.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"
#include "kimi/dtype.h"

namespace kimi::kernels::avx2 {
namespace {

// 2^(e − kBias) for every E8M0 byte, NaN at 255: the block scale 2^(e − 127) with the factor
// the integer codes of a kernel carry already taken out.
template <int kBias>
struct E8M0ScaleTable {
  float v[256];
  E8M0ScaleTable() {
    for (int e = 0; e < 256; ++e) v[e] = e == 255 ? NAN : std::ldexp(1.0f, e - kBias);
  }
};
template <int kBias>
const float* E8M0Scales() {
  static const E8M0ScaleTable<kBias> table;
  return table.v;
}

// 2^(e−128): half the block scale, for int8 codes that hold doubled E2M1 values.
const float* HalfScales() { return E8M0Scales<128>(); }

// 32 weights of one block as int8 doubled E2M1 values, in element order (lo, hi halves).
static inline void DecodeBlock(const uint8_t* packed16, __m128i* first16, __m128i* last16) {
  const __m128i lut = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed16));
  __m128i even = _mm_shuffle_epi8(lut, _mm_and_si128(bytes, low_mask));
  __m128i odd = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask));
  *first16 = _mm_unpacklo_epi8(even, odd);
  *last16 = _mm_unpackhi_epi8(even, odd);
}

static inline __m256 I8ToF32(__m128i v) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)); }

template <int R, int MB>
void GemvTile(const float* x, int64_t ldx, const uint8_t* wp, const uint8_t* ws, int64_t K, float* y,
              int64_t ldy) {
  const float* half_scale = HalfScales();
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize;
  __m256 acc[R][MB];
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
  for (int64_t b = 0; b < row_blocks; ++b) {
    const int64_t k = b * kMxfp4BlockSize;
    for (int r = 0; r < R; ++r) {
      __m128i lo, hi;
      DecodeBlock(wp + r * row_bytes + b * 16, &lo, &hi);
      __m256 w0 = I8ToF32(lo), w1 = I8ToF32(_mm_srli_si128(lo, 8));
      __m256 w2 = I8ToF32(hi), w3 = I8ToF32(_mm_srli_si128(hi, 8));
      __m256 scale = _mm256_set1_ps(half_scale[ws[r * row_blocks + b]]);
      for (int m = 0; m < MB; ++m) {
        const float* xm = x + m * ldx + k;
        __m256 s = _mm256_mul_ps(w0, _mm256_loadu_ps(xm));
        s = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xm + 8), s);
        s = _mm256_fmadd_ps(w2, _mm256_loadu_ps(xm + 16), s);
        s = _mm256_fmadd_ps(w3, _mm256_loadu_ps(xm + 24), s);
        acc[r][m] = _mm256_fmadd_ps(s, scale, acc[r][m]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) y[m * ldy + r] = HorizontalSum(acc[r][m]);
}

template <int R>
void GemvRows(const float* x, int64_t ldx, const uint8_t* wp, const uint8_t* ws, int64_t M, int64_t K,
              float* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + 2 <= M; m += 2) GemvTile<R, 2>(x + m * ldx, ldx, wp, ws, K, y + m * ldy, ldy);
  if (m < M) GemvTile<R, 1>(x + m * ldx, ldx, wp, ws, K, y + m * ldy, ldy);
}

struct Mxfp4Packer {
  const uint8_t* wp;
  const uint8_t* ws;
  int64_t K;
  void Pack(int64_t n0, int64_t rows, int64_t k0, int64_t kc, float* dst) const {
    const float* half_scale = HalfScales();
    PackPanels(rows, kc, dst, [&](int64_t n, float* column) {
      const uint8_t* prow = wp + (n0 + n) * (K / 2);
      const uint8_t* srow = ws + (n0 + n) * (K / kMxfp4BlockSize);
      for (int64_t k = 0; k < kc; k += kMxfp4BlockSize) {
        const int64_t b = (k0 + k) / kMxfp4BlockSize;
        __m128i lo, hi;
        DecodeBlock(prow + b * 16, &lo, &hi);
        __m256 scale = _mm256_set1_ps(half_scale[srow[b]]);
        alignas(32) float tmp[32];
        _mm256_store_ps(tmp, _mm256_mul_ps(I8ToF32(lo), scale));
        _mm256_store_ps(tmp + 8, _mm256_mul_ps(I8ToF32(_mm_srli_si128(lo, 8)), scale));
        _mm256_store_ps(tmp + 16, _mm256_mul_ps(I8ToF32(hi), scale));
        _mm256_store_ps(tmp + 24, _mm256_mul_ps(I8ToF32(_mm_srli_si128(hi, 8)), scale));
        for (int i = 0; i < 32; ++i) column[(k + i) * kNR] = tmp[i];
      }
    });
  }
};

// ---- The decode GEMV: int16 activations times int16 weights ------------------------------
//
// x is quantised once per call: per block b of 32, s_b = max|x|/32767 and q = round(x/s_b), an
// int16 (round to nearest even, as std::lrintf in the default mode). Each weight becomes an
// int16 too, its doubled E2M1 value (|w| <= 12) in the high byte and 0 in the low one, so
// vpmaddwd multiplies 16 weights by 16 activations and adds neighbours into int32: every
// product is |q·256·w| <= 32767·3072 < 2^27, a block pair's lane sums 8 of them (< 2^30), so
// block sums are exact and, being 256 times an integer below 2^22, exact in fp32 as well. The
// only rounding is that of x, bounded per output by
//   Σ_b (max_{i∈b}|x_i| / 65534) · Σ_{i∈b} |w_i|
// (relative rms error ~2e-5 on random data; matmul_test checks the bound output by output).
//
// Decoding: a 32-byte load of a row holds two blocks (low nibble = even element). Masking the
// low nibbles and, after a 16-bit shift by 4, the high ones, one vpshufb each maps the codes
// to doubled E2M1 bytes; a 16-bit lane j of the first result then holds elements 4j (low byte)
// and 4j+2 (high byte), of the second 4j+1 and 4j+3. A shift left by 8 and a mask of the high
// byte turn each into two int16 vectors (elements 4j+k times 256 for k = 0..3), 9 instructions
// per 64 weights, done once for all activation rows. The activations are stored to match:
// per pair of blocks, four planes of 16 int16, plane k lane j = q[4j+k] (lanes 0–7 block 2p,
// 8–15 block 2p+1), and the pair's scales as [s_2p ×4, s_2p+1 ×4]. Per activation row a pair
// costs 4 vpmaddwd (activations from memory), 3 adds, a conversion, one scale product and an
// FMA: 10 instructions, against 18 for the byte-plane form this replaced (int16 activations
// split into two int8 planes for vpmaddubsw), which is what batched rows pay for.
//
// Scales: the weight scale of a block, 2^(e−127), is taken times 2^−9 (the doubling and the
// high byte). When every scale byte of a strip is in [10, 254] (any real checkpoint), the
// one-row strips build eight blocks' scales at once from the bits ((e − 9) << 23), exactly the
// table's values; otherwise, and for batched rows, each pair broadcasts them from the table.
// A row's result does not depend on the path or on which other rows share its tile: every
// accumulator takes the same operations on the same values in the same order.

constexpr float kActivationLevels = 32767.0f;

// 2^(e−136) (see "Scales" above).
const float* WeightScales() { return E8M0Scales<136>(); }

struct QuantisedActivations {
  int16_t* planes;  // [M, pairs, 4, 16] (above)
  float* scales;    // [M, pairs, 8]
  int64_t pairs;    // K/32 blocks rounded up to pairs
};

// One block of 32 values as four int32 vectors t[k], lane j = round(x[4j+k]/s); *scale = s.
static inline void QuantiseBlock(const float* xb, __m256i t[4], float* scale) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 y0 = _mm256_loadu_ps(xb), y1 = _mm256_loadu_ps(xb + 8);
  const __m256 y2 = _mm256_loadu_ps(xb + 16), y3 = _mm256_loadu_ps(xb + 24);
  const __m256 amax = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(y0, abs_mask), _mm256_and_ps(y1, abs_mask)),
                                    _mm256_max_ps(_mm256_and_ps(y2, abs_mask), _mm256_and_ps(y3, abs_mask)));
  const float mx = HorizontalMax(amax);
  const __m256 inv = _mm256_set1_ps(mx > 0.0f ? kActivationLevels / mx : 0.0f);
  *scale = mx / kActivationLevels;
  // Groups of 4 elements (j = 0..7) arrive as y0 = [j0 | j1], y1 = [j2 | j3], ...; pairing
  // group j with j+4 in one register makes a 4×4 transpose per 128-bit half put j in order.
  const auto round = [&](__m256 v) { return _mm256_cvtps_epi32(_mm256_mul_ps(v, inv)); };
  const __m256i q0 = round(_mm256_permute2f128_ps(y0, y2, 0x20)), q1 = round(_mm256_permute2f128_ps(y0, y2, 0x31));
  const __m256i q2 = round(_mm256_permute2f128_ps(y1, y3, 0x20)), q3 = round(_mm256_permute2f128_ps(y1, y3, 0x31));
  const __m256i a = _mm256_unpacklo_epi32(q0, q1), b = _mm256_unpackhi_epi32(q0, q1);
  const __m256i c = _mm256_unpacklo_epi32(q2, q3), d = _mm256_unpackhi_epi32(q2, q3);
  t[0] = _mm256_unpacklo_epi64(a, c);
  t[1] = _mm256_unpackhi_epi64(a, c);
  t[2] = _mm256_unpacklo_epi64(b, d);
  t[3] = _mm256_unpackhi_epi64(b, d);
}

void QuantiseActivations(const float* x, int64_t ldx, int64_t M, int64_t K, QuantisedActivations* out) {
  const int64_t blocks = K / kMxfp4BlockSize, pairs = (blocks + 1) / 2;
  out->pairs = pairs;
  out->planes = ThreadScratchArray<int16_t>(ScratchSlot::kA, M * pairs * 64);
  out->scales = ThreadScratchArray<float>(ScratchSlot::kB, M * pairs * 8);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t p = 0; p < pairs; ++p) {
      __m256i first[4], second[4];
      float first_scale, second_scale = 0.0f;
      QuantiseBlock(x + m * ldx + 2 * p * kMxfp4BlockSize, first, &first_scale);
      if (2 * p + 1 < blocks) {
        QuantiseBlock(x + m * ldx + (2 * p + 1) * kMxfp4BlockSize, second, &second_scale);
      } else {  // a lone last block: the pair's second half is zero
        for (__m256i& v : second) v = _mm256_setzero_si256();
      }
      int16_t* planes = out->planes + (m * pairs + p) * 64;
      for (int k = 0; k < 4; ++k) {
        // packs gives [first 0–3, second 0–3 | first 4–7, second 4–7]; the permute orders it.
        const __m256i both = _mm256_permute4x64_epi64(_mm256_packs_epi32(first[k], second[k]), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(planes + 16 * k), both);
      }
      _mm256_storeu_ps(out->scales + (m * pairs + p) * 8, _mm256_setr_m128(_mm_set1_ps(first_scale), _mm_set1_ps(second_scale)));
    }
  }
}

// True when every scale byte is in [10, 254], where ((e − 9) << 23) are the bits of 2^(e−136).
static bool ScalesHaveFastForm(const uint8_t* ws, int64_t n) {
  const __m256i ten = _mm256_set1_epi8(10), limit = _mm256_set1_epi8(char(245));
  __m256i bad = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // e − 10 (mod 256) >= 245 exactly for e < 10 and e = 255
    const __m256i d = _mm256_sub_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ws + i)), ten);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi8(_mm256_min_epu8(d, limit), limit));
  }
  bool ok = _mm256_testz_si256(bad, bad);
  for (; i < n; ++i) ok = ok && ws[i] >= 10 && ws[i] != 255;
  return ok;
}

// The weight scales of eight blocks (e[0..7], all in [10, 254]) in the order [0 2 4 6 | 1 3 5
// 7], so that an in-lane permute with k in every field gives pair k's [s_2k ×4 | s_2k+1 ×4].
static inline __m256 EightWeightScales(const uint8_t* e) {
  const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e)));
  const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(ordered, _mm256_set1_epi32(9)), 23));
}

// acc[m] += one weight row's pair of blocks (32 packed bytes; a lone last block has the upper
// 16 zero, which decode to w = 0) times activation rows m = 0..MB-1, whose planes start at
// q + m·q_stride and scales at xs + m·xs_stride.
template <int MB>
static inline void AccumulatePair(__m256i raw, __m256 w_scale, const int16_t* q, int64_t q_stride, const float* xs,
                                  int64_t xs_stride, __m256* acc) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
                                       0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m256i nibble = _mm256_set1_epi8(0x0f), high_byte = _mm256_set1_epi16(int16_t(0xff00));
  const __m256i even = _mm256_shuffle_epi8(lut, _mm256_and_si256(raw, nibble));
  const __m256i odd = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble));
  const __m256i w0 = _mm256_slli_epi16(even, 8), w2 = _mm256_and_si256(even, high_byte);
  const __m256i w1 = _mm256_slli_epi16(odd, 8), w3 = _mm256_and_si256(odd, high_byte);
  for (int m = 0; m < MB; ++m) {
    const __m256i* plane = reinterpret_cast<const __m256i*>(q + m * q_stride);
    const __m256i d01 = _mm256_add_epi32(_mm256_madd_epi16(w0, _mm256_loadu_si256(plane)),
                                         _mm256_madd_epi16(w1, _mm256_loadu_si256(plane + 1)));
    const __m256i d23 = _mm256_add_epi32(_mm256_madd_epi16(w2, _mm256_loadu_si256(plane + 2)),
                                         _mm256_madd_epi16(w3, _mm256_loadu_si256(plane + 3)));
    const __m256 scale = _mm256_mul_ps(w_scale, _mm256_loadu_ps(xs + m * xs_stride));
    acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(d01, d23)), scale, acc[m]);
  }
}

// Rows of at most this many packed bytes are short (k3-mini's experts: 128–256 bytes): the
// hardware prefetcher never gets going on them, so a strip prefetches the matrix in address
// order, R lines per four blocks, from kShortRowPrefetchBytes past its first packed byte (one
// sequential stream, as the BF16 GEMV's batch-1 path does). Long rows (K3's: 1.5–3.5 KiB)
// stream well without help.
constexpr int64_t kShortRowBytes = 1024;
constexpr int64_t kShortRowPrefetchBytes = 4096;

// y[m, r] for weight rows r < R and activation rows m0 + m, m < MB. `fast_scales`: the
// strip's scales all have the fast form (ScalesHaveFastForm); used by one-row tiles.
template <int R, int MB>
void GemvQ16Tile(const QuantisedActivations& xa, int64_t m0, const uint8_t* wp, const uint8_t* ws, int64_t K,
                 bool fast_scales, const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
  const float* scale_of = WeightScales();
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize, pairs = xa.pairs, full_pairs = row_blocks / 2;
  const int16_t* q = xa.planes + m0 * pairs * 64;
  const float* xs = xa.scales + m0 * pairs * 8;
  const auto row_pair = [&](int r, int64_t p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + r * row_bytes + p * 32));
  };
  __m256 acc[R][MB];
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
  int64_t p = 0;
  if constexpr (MB == 1) {
    // Four pairs per step, their scales built at once (one row: the per-pair broadcasts were
    // a fifth of its instructions).
    for (; fast_scales && p + 4 <= full_pairs; p += 4) {
      for (int r = 0; r < 2 * R; ++r, prefetch += 64) {
        if (prefetch < prefetch_end) _mm_prefetch(prefetch, _MM_HINT_T0);
      }
      for (int r = 0; r < R; ++r) {
        const __m256 eight = EightWeightScales(ws + r * row_blocks + 2 * p);
        AccumulatePair<1>(row_pair(r, p), _mm256_permute_ps(eight, 0x00), q + p * 64, 0, xs + p * 8, 0, acc[r]);
        AccumulatePair<1>(row_pair(r, p + 1), _mm256_permute_ps(eight, 0x55), q + (p + 1) * 64, 0, xs + (p + 1) * 8, 0,
                          acc[r]);
        AccumulatePair<1>(row_pair(r, p + 2), _mm256_permute_ps(eight, 0xaa), q + (p + 2) * 64, 0, xs + (p + 2) * 8, 0,
                          acc[r]);
        AccumulatePair<1>(row_pair(r, p + 3), _mm256_permute_ps(eight, 0xff), q + (p + 3) * 64, 0, xs + (p + 3) * 8, 0,
                          acc[r]);
      }
    }
  }
  for (; p < full_pairs; ++p) {
    if (p % 2 == 0) {
      for (int r = 0; r < R; ++r, prefetch += 64) {
        if (prefetch < prefetch_end) _mm_prefetch(prefetch, _MM_HINT_T0);
      }
    }
    for (int r = 0; r < R; ++r) {
      const uint8_t* e = ws + r * row_blocks + 2 * p;
      const __m256 w_scale = _mm256_setr_m128(_mm_broadcast_ss(scale_of + e[0]), _mm_broadcast_ss(scale_of + e[1]));
      AccumulatePair<MB>(row_pair(r, p), w_scale, q + p * 64, pairs * 64, xs + p * 8, pairs * 8, acc[r]);
    }
  }
  if (full_pairs < pairs) {  // a lone last block
    for (int r = 0; r < R; ++r) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wp + r * row_bytes + p * 32));
      const __m256 w_scale = _mm256_zextps128_ps256(_mm_broadcast_ss(scale_of + ws[r * row_blocks + 2 * p]));
      AccumulatePair<MB>(_mm256_zextsi128_si256(raw), w_scale, q + p * 64, pairs * 64, xs + p * 8, pairs * 8, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) y[m * ldy + r] = HorizontalSum(acc[r][m]);
}

// The 256-bit tile above as a form of the strip loop below (kTail: the strip loop's last
// strips have one row).
struct Form256 {
  static constexpr int kTail = 1;
  template <int R, int MB>
  static void Tile(const QuantisedActivations& xa, int64_t m0, const uint8_t* wp, const uint8_t* ws, int64_t /*rows*/,
                   int64_t K, bool fast_scales, const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
    GemvQ16Tile<R, MB>(xa, m0, wp, ws, K, fast_scales, prefetch, prefetch_end, y, ldy);
  }
};

// ---- The decode GEMV in 512-bit registers (CPUs with AVX-512BW and VNNI) -------------------
//
// Zen 5 issues 512-bit operations at the rate of 256-bit ones, and the decode GEMV at 1–3 rows
// is bound by instructions. Each 256-bit accumulator of the form above (weight row r ×
// activation row m, 8 fp32 lanes) is kept lane for lane as one half of a 512-bit one that holds
// weight rows r and r+1 for activation row m: one decode (the same 9 instructions) serves two
// weight rows, the activation planes and scales are broadcast to both halves, vpdpwssd fuses
// vpmaddwd with the int32 add (block sums are exact integers either way, so the order of the
// adds does not matter), and the conversion, the scale product (weight × activation scale) and
// the FMA are the 256-bit form's, per lane, pair after pair in the same order; each half ends
// in the same HorizontalSum. Results are therefore bit for bit those of the 256-bit form.
// Weight scales: four pairs' bytes of both rows (masked loads past the row's last block) become
// 16 fp32 scales at once, from the bits when the strip has the fast form and by a gather from
// the table otherwise (the same values), and one vpermps per pair spreads them out. A lone
// last block's missing partner gets some finite scale times a zero activation scale and zero
// weights: it adds ±0 to accumulators that are never −0 (they start at +0), as the 256-bit
// form's +0 does. A strip of one row runs as two copies of that row, the copy discarded.
#define KIMI_AVX512_VNNI gnu::target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12's AVX-512 intrinsics start some vectors from an undefined value, which
// -W(maybe-)uninitialized reports once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

template <int R, int MB>
[[KIMI_AVX512_VNNI]] void GemvQ16Tile512(const QuantisedActivations& xa, int64_t m0, const uint8_t* wp,
                                          const uint8_t* ws, int64_t rows, int64_t K, bool fast_scales,
                                          const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
  static_assert(R % 2 == 0);
  constexpr int H = R / 2;
  const float* scale_of = WeightScales();
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize, pairs = xa.pairs, full_pairs = row_blocks / 2;
  const int16_t* q = xa.planes + m0 * pairs * 64;
  const float* xs = xa.scales + m0 * pairs * 8;
  const uint8_t* prow[R];
  const uint8_t* srow[R];
  for (int r = 0; r < R; ++r) {
    const int64_t i = r < rows ? r : rows - 1;
    prow[r] = wp + i * row_bytes;
    srow[r] = ws + i * row_blocks;
  }
  const __m512i lut = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
  const __m512i nibble = _mm512_set1_epi8(0x0f), high_byte = _mm512_set1_epi16(int16_t(0xff00));
  // Pair k of four: [row r: s_2k ×4, s_2k+1 ×4 | row r+1: the same].
  const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8, 9, 9, 9, 9);
  __m512 acc[H][MB];
  for (int h = 0; h < H; ++h)
    for (int m = 0; m < MB; ++m) acc[h][m] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; p += 4) {
    for (int r = 0; r < 2 * R; ++r, prefetch += 64) {
      if (prefetch < prefetch_end) _mm_prefetch(prefetch, _MM_HINT_T0);
    }
    const int64_t np = pairs - p < 4 ? pairs - p : 4, nb = row_blocks - 2 * p < 8 ? row_blocks - 2 * p : 8;
    const __mmask16 block_mask = static_cast<__mmask16>((1u << nb) - 1);
    __m512 scales[H];
    for (int h = 0; h < H; ++h) {
      const __m512i e = _mm512_cvtepu8_epi32(_mm_unpacklo_epi64(_mm_maskz_loadu_epi8(block_mask, srow[2 * h] + 2 * p),
                                                                _mm_maskz_loadu_epi8(block_mask, srow[2 * h + 1] + 2 * p)));
      scales[h] = fast_scales ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(9)), 23))
                              : _mm512_i32gather_ps(e, scale_of, 4);
    }
    for (int64_t k = 0; k < np; ++k) {
      const int64_t pk = p + k;
      const int16_t* qk = q + pk * 64;
      const float* xk = xs + pk * 8;
      const __m512i pick = _mm512_add_epi32(spread, _mm512_set1_epi32(int(2 * k)));
      for (int h = 0; h < H; ++h) {
        __m512i raw;
        if (pk < full_pairs) {
          raw = _mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(prow[2 * h] + pk * 32))),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(prow[2 * h + 1] + pk * 32)), 1);
        } else {  // a lone last block: the upper 16 bytes zero, as in the 256-bit form
          raw = _mm512_inserti64x4(
              _mm512_zextsi256_si512(_mm256_zextsi128_si256(
                  _mm_loadu_si128(reinterpret_cast<const __m128i*>(prow[2 * h] + pk * 32)))),
              _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(prow[2 * h + 1] + pk * 32))), 1);
        }
        const __m512i even = _mm512_shuffle_epi8(lut, _mm512_and_si512(raw, nibble));
        const __m512i odd = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble));
        const __m512i w0 = _mm512_slli_epi16(even, 8), w2 = _mm512_and_si512(even, high_byte);
        const __m512i w1 = _mm512_slli_epi16(odd, 8), w3 = _mm512_and_si512(odd, high_byte);
        const __m512 w_scale = _mm512_permutexvar_ps(pick, scales[h]);
        for (int m = 0; m < MB; ++m) {
          const __m256i* plane = reinterpret_cast<const __m256i*>(qk + m * pairs * 64);
          __m512i d = _mm512_madd_epi16(w0, _mm512_broadcast_i64x4(_mm256_loadu_si256(plane)));
          d = _mm512_dpwssd_epi32(d, w1, _mm512_broadcast_i64x4(_mm256_loadu_si256(plane + 1)));
          d = _mm512_dpwssd_epi32(d, w2, _mm512_broadcast_i64x4(_mm256_loadu_si256(plane + 2)));
          d = _mm512_dpwssd_epi32(d, w3, _mm512_broadcast_i64x4(_mm256_loadu_si256(plane + 3)));
          const __m512 scale = _mm512_mul_ps(w_scale, _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_loadu_pd(reinterpret_cast<const double*>(xk + m * pairs * 8)))));
          acc[h][m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, acc[h][m]);
        }
      }
    }
  }
  for (int h = 0; h < H; ++h) {
    for (int m = 0; m < MB; ++m) {
      y[m * ldy + 2 * h] = HorizontalSum(_mm512_castps512_ps256(acc[h][m]));
      if (2 * h + 1 < rows)
        y[m * ldy + 2 * h + 1] =
            HorizontalSum(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[h][m]), 1)));
    }
  }
}

#pragma GCC diagnostic pop

struct Form512 {
  static constexpr int kTail = 2;
  template <int R, int MB>
  static void Tile(const QuantisedActivations& xa, int64_t m0, const uint8_t* wp, const uint8_t* ws, int64_t rows,
                   int64_t K, bool fast_scales, const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
    GemvQ16Tile512<R, MB>(xa, m0, wp, ws, rows, K, fast_scales, prefetch, prefetch_end, y, ldy);
  }
};

// All M activation rows against `rows` (at most R) weight rows, in tiles of at most MB rows.
template <class Form, int R, int MB>
void GemvQ16Rows(const QuantisedActivations& xa, int64_t M, const uint8_t* wp, const uint8_t* ws, int64_t rows, int64_t K,
                 bool fast_scales, const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
  const auto tile = [&]<int T>(int64_t m) {
    Form::template Tile<R, T>(xa, m, wp, ws, rows, K, fast_scales, prefetch, prefetch_end, y + m * ldy, ldy);
  };
  int64_t m = 0;
  for (; m + MB <= M; m += MB) tile.template operator()<MB>(m);
  static_assert(MB <= 4);
  if constexpr (MB > 3) {
    if (M - m == 3) tile.template operator()<3>(m);
  }
  if constexpr (MB > 2) {
    if (M - m == 2) tile.template operator()<2>(m);
  }
  if constexpr (MB > 1) {
    if (M - m == 1) tile.template operator()<1>(m);
  }
}

// Strips of R weight rows, then of Form::kTail. One-row tiles (MB == 1) of the 256-bit form
// and every tile of the 512-bit one check each strip's scales for the fast form just before
// using them, so the check reads what the strip is about to read anyway.
template <class Form, int R, int MB>
void GemvQ16Strips(const QuantisedActivations& xa, int64_t M, const uint8_t* wp, const uint8_t* ws, int64_t N,
                   int64_t K, float* y, int64_t ldy) {
  constexpr bool kCheck = MB == 1 || Form::kTail > 1;
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize;
  const char* end = reinterpret_cast<const char*>(wp + N * row_bytes);
  const int64_t distance = row_bytes <= kShortRowBytes ? kShortRowPrefetchBytes : 0;
  const auto fast = [&](int64_t n, int64_t rows) { return kCheck && ScalesHaveFastForm(ws + n * row_blocks, rows * row_blocks); };
  int64_t n = 0;
  for (; n + R <= N; n += R) {
    const char* strip = reinterpret_cast<const char*>(wp + n * row_bytes);
    GemvQ16Rows<Form, R, MB>(xa, M, wp + n * row_bytes, ws + n * row_blocks, R, K, fast(n, R),
                             distance != 0 ? strip + distance : end, end, y + n, ldy);
  }
  for (; n < N; n += Form::kTail) {
    const int64_t rows = N - n < Form::kTail ? N - n : Form::kTail;
    GemvQ16Rows<Form, Form::kTail, MB>(xa, M, wp + n * row_bytes, ws + n * row_blocks, rows, K, fast(n, rows), end, end,
                                       y + n, ldy);
  }
}

template <class Form>
void GemvMxfp4Q16In(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M, int64_t N,
                    int64_t K, float* y, int64_t ldy) {
  // Short rows: the strips prefetch from kShortRowPrefetchBytes past each strip, so the head
  // of the matrix is requested here, before the activations are quantised.
  if (K / 2 <= kShortRowBytes) {
    const char* head = reinterpret_cast<const char*>(w_packed);
    for (int64_t b = 0; b < kShortRowPrefetchBytes && b < N * K / 2; b += 64) _mm_prefetch(head + b, _MM_HINT_T0);
  }
  QuantisedActivations xa;
  QuantiseActivations(x, ldx, M, K, &xa);
  if constexpr (Form::kTail > 1) {
    // 512-bit: each accumulator holds two weight rows; 8-row strips × up to 4 activation rows
    // (16 accumulators, one row: 4). Measured in one process on the routed 16-row step, the
    // 512-bit form took 1.50× less CPU than the 256-bit one with these strips, 1.43× with
    // 4-row strips and 1.07× with 2-row ones (docs/benchmarks.md).
    GemvQ16Strips<Form, 8, 4>(xa, M, w_packed, w_scale, N, K, y, ldy);
  } else if (M == 1) {
    // One row: 8-row strips (8 independent sums; the batch-1 decode is bound by instructions).
    GemvQ16Strips<Form, 8, 1>(xa, M, w_packed, w_scale, N, K, y, ldy);
  } else if (M == 3) {
    // Three rows: one weight row × the three activation rows. The 2 × 3 tile of the general
    // case costs 5–7% more per row here (measured in one process, routed-expert shapes,
    // docs/benchmarks.md); at 2 and 4 rows the 2-wide tiles are the faster ones.
    GemvQ16Strips<Form, 1, 3>(xa, M, w_packed, w_scale, N, K, y, ldy);
  } else {
    // Batched rows: 2 weight rows × up to 4 activation rows (8 accumulators), each pair of
    // blocks decoded once for the tile's rows.
    GemvQ16Strips<Form, 2, 4>(xa, M, w_packed, w_scale, N, K, y, ldy);
  }
}

}  // namespace

void GemvMxfp4F32(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
               int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize;
  int64_t n = 0;
  for (; n + 4 <= N; n += 4)
    GemvRows<4>(x, ldx, w_packed + n * row_bytes, w_scale + n * row_blocks, M, K, y + n, ldy);
  for (; n < N; ++n) GemvRows<1>(x, ldx, w_packed + n * row_bytes, w_scale + n * row_blocks, M, K, y + n, ldy);
}

void GemvMxfp4Q16Form256(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                         int64_t N, int64_t K, float* y, int64_t ldy) {
  GemvMxfp4Q16In<Form256>(x, ldx, w_packed, w_scale, M, N, K, y, ldy);
}

void GemvMxfp4Q16Form512(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                         int64_t N, int64_t K, float* y, int64_t ldy) {
  GemvMxfp4Q16In<Form512>(x, ldx, w_packed, w_scale, M, N, K, y, ldy);
}

void GemvMxfp4Q16(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  (cpu::HasAvx512Vnni() ? GemvMxfp4Q16Form512 : GemvMxfp4Q16Form256)(x, ldx, w_packed, w_scale, M, N, K, y, ldy);
}

void GemmMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
               int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  BlockedGemm(Mxfp4Packer{w_packed, w_scale, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
