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
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"
#include "kimi/dtype.h"

namespace kimi::kernels::avx2 {
namespace {

// 2^(e−128) for every E8M0 byte (half the block scale; the int8 codes are doubled), NaN at 255.
struct HalfScaleTable {
  float v[256];
  HalfScaleTable() {
    for (int e = 0; e < 256; ++e) v[e] = e == 255 ? NAN : std::ldexp(1.0f, e - 128);
  }
};
const HalfScaleTable& HalfScales() {
  static const HalfScaleTable table;
  return table;
}

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
  const float* half_scale = HalfScales().v;
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
    const float* half_scale = HalfScales().v;
    for (int64_t p = 0; p * kNR < rows; ++p) {
      float* panel = dst + p * kc * kNR;
      for (int64_t j = 0; j < kNR; ++j) {
        const int64_t n = p * kNR + j;
        if (n >= rows) {
          for (int64_t k = 0; k < kc; ++k) panel[k * kNR + j] = 0.0f;
          continue;
        }
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
          for (int i = 0; i < 32; ++i) panel[(k + i) * kNR + j] = tmp[i];
        }
      }
    }
  }
};

// ---- The decode GEMV with activations as int16 -------------------------------------------
//
// x is quantised once per call: per block b of 32, s_b = max|x|/32512 and q = round(x/s_b),
// an int16 with |q| <= 32512 = 127·256. Each q is kept as two bytes, q = 256·hi + lo with hi
// = q >> 8 signed (|hi| <= 127) and lo = q & 255 unsigned, in two byte planes, so that the
// products are int8 dot products (vpmaddubsw) without widening the weights to int16:
//   Σ w·q = Σ lo·w + 256·Σ hi·w,
// lo·w with lo as vpmaddubsw's unsigned operand and w (doubled E2M1, |w| <= 12) its signed
// one; hi·w as |w| times hi with w's sign (vpsignb, which is why |hi| stays below 128). Pair
// sums stay inside int16 (2·255·12 and 2·127·12, twice that after adding the odd half) and
// block sums inside int32, so every block sum is exact and the only rounding is that of x,
// bounded per output by
//   Σ_b (max_{i∈b}|x_i| / 65024) · Σ_{i∈b} |w_i|
// (relative rms error ~2e-5 on random data; matmul_test checks the bound output by output).
// Blocks are stored in pairs, 64 bytes per plane and pair: the 16 even elements of block 2p,
// those of block 2p+1, then the 16 odd elements of each, the order in which one 32-byte load
// of a row's packed weights (two blocks, low nibble = even element) comes out of vpshufb.
// Against widening the weights to int16 for vpmaddwd (the previous form of this path, same
// rounding of x) it issues fewer instructions per weight row at batch 1 (the widening was
// most of the decode) and about as many per extra activation row: 1.11–1.19× faster at
// M = 1 on k3-mini's experts, the same within noise at M = 2–16 (docs/kernels.md). int8
// activations (one plane, ~4e-3 error) were faster still but failed the end-to-end
// reference test.

constexpr float kActivationLevels = 127.0f * 256.0f;

struct QuantisedActivations {
  uint8_t* lo;     // [M, row] low bytes, in block pairs (above)
  int8_t* hi;      // [M, row] high bytes, same layout
  float* scales;   // [M, K/32]
  int64_t row;     // bytes per row of a plane: K rounded up to a whole pair of blocks
};

// The 16 int16 of v as bytes: low bytes (unsigned) to lo, high bytes (signed) to hi.
static inline void StoreSplit(__m256i v, uint8_t* lo, int8_t* hi) {
  const __m256i low = _mm256_and_si256(v, _mm256_set1_epi16(0xff)), high = _mm256_srai_epi16(v, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lo),
                   _mm_packus_epi16(_mm256_castsi256_si128(low), _mm256_extracti128_si256(low, 1)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hi),
                   _mm_packs_epi16(_mm256_castsi256_si128(high), _mm256_extracti128_si256(high, 1)));
}

// round(a·inv), round(b·inv) as 16 int16 in order (a first). Rounding is to nearest even, as
// std::lrintf in the default mode; |a·inv| <= kActivationLevels by the choice of inv.
static inline __m256i RoundToInt16(__m256 a, __m256 b, __m256 inv) {
  const __m256i qa = _mm256_cvtps_epi32(_mm256_mul_ps(a, inv)), qb = _mm256_cvtps_epi32(_mm256_mul_ps(b, inv));
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(qa, qb), _MM_SHUFFLE(3, 1, 2, 0));
}

void QuantiseActivations(const float* x, int64_t ldx, int64_t M, int64_t K, QuantisedActivations* out) {
  const int64_t blocks = K / kMxfp4BlockSize;
  out->row = (blocks + 1) / 2 * 2 * kMxfp4BlockSize;
  out->lo = ThreadScratchArray<uint8_t>(ScratchSlot::kA, M * out->row);
  out->hi = ThreadScratchArray<int8_t>(ScratchSlot::kC, M * out->row);
  out->scales = ThreadScratchArray<float>(ScratchSlot::kB, M * blocks);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* xb = x + m * ldx + b * kMxfp4BlockSize;
      const __m256 x0 = _mm256_loadu_ps(xb), x1 = _mm256_loadu_ps(xb + 8);
      const __m256 x2 = _mm256_loadu_ps(xb + 16), x3 = _mm256_loadu_ps(xb + 24);
      const __m256 amax = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(x0, abs_mask), _mm256_and_ps(x1, abs_mask)),
                                        _mm256_max_ps(_mm256_and_ps(x2, abs_mask), _mm256_and_ps(x3, abs_mask)));
      const float mx = HorizontalMax(amax);
      const __m256 inv = _mm256_set1_ps(mx > 0.0f ? kActivationLevels / mx : 0.0f);
      out->scales[m * blocks + b] = mx / kActivationLevels;
      const int64_t at = m * out->row + b / 2 * 2 * kMxfp4BlockSize + b % 2 * 16;
      StoreSplit(RoundToInt16(EvenElements(x0, x1), EvenElements(x2, x3), inv), out->lo + at, out->hi + at);
      StoreSplit(RoundToInt16(OddElements(x0, x1), OddElements(x2, x3), inv), out->lo + at + kMxfp4BlockSize,
                 out->hi + at + kMxfp4BlockSize);
    }
  }
}

// Σ w·q over a pair of blocks as 8 exact int32 lanes (lanes 0–3 block 2p, 4–7 block 2p+1), w
// as signed int8 (even and odd elements), q as its byte planes in the same order.
static inline __m256i PairDot(__m256i w_even, __m256i w_odd, __m256i lo_even, __m256i lo_odd, __m256i hi_even,
                              __m256i hi_odd) {
  const __m256i low = _mm256_add_epi16(_mm256_maddubs_epi16(lo_even, w_even), _mm256_maddubs_epi16(lo_odd, w_odd));
  const __m256i high = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w_even), _mm256_sign_epi8(hi_even, w_even)),
                                        _mm256_maddubs_epi16(_mm256_abs_epi8(w_odd), _mm256_sign_epi8(hi_odd, w_odd)));
  return _mm256_add_epi32(_mm256_madd_epi16(low, _mm256_set1_epi16(1)), _mm256_madd_epi16(high, _mm256_set1_epi16(256)));
}

// acc[m] += the products of one weight row's pair of blocks (32 packed bytes; a lone last
// block has the upper 16 zero, which decode to w = 0) with activation rows m = 0..MB-1, whose
// pair starts at `at` + m·xa.row in the planes; scales per 128-bit half (block).
template <int MB>
static inline void AccumulatePair(__m256i bytes, __m256 w_scale, const QuantisedActivations& xa, int64_t at,
                                  const __m256* x_scale, __m256* acc) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
                                       0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
  const __m256i low_mask = _mm256_set1_epi8(0x0f);
  const __m256i w_even = _mm256_shuffle_epi8(lut, _mm256_and_si256(bytes, low_mask));
  const __m256i w_odd = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_mask));
  const auto plane = [](const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); };
  for (int m = 0; m < MB; ++m) {
    const int64_t q = at + m * xa.row;
    const __m256i dot = PairDot(w_even, w_odd, plane(xa.lo + q), plane(xa.lo + q + kMxfp4BlockSize), plane(xa.hi + q),
                                plane(xa.hi + q + kMxfp4BlockSize));
    acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(w_scale, x_scale[m]), acc[m]);
  }
}

// Rows of at most this many packed bytes are short (k3-mini's experts: 128–256 bytes): the
// hardware prefetcher never gets going on them, so a strip prefetches the matrix in address
// order, R lines per four blocks, from kShortRowPrefetchBytes past its first packed byte (one
// sequential stream, as the BF16 GEMV's batch-1 path does). Long rows (K3's: 1.5–3.5 KiB)
// stream well without help, and there the decode is bound by instructions, not memory: 8-row
// strips (8 independent sums) measured ~10% faster than 4 at K = 7168, while 4-row strips
// were faster on the short rows.
constexpr int64_t kShortRowBytes = 1024;
constexpr int64_t kShortRowPrefetchBytes = 4096;

template <int R, int MB>
void GemvQ16Tile(const QuantisedActivations& xa, int64_t m0, const uint8_t* wp, const uint8_t* ws, int64_t K,
                 const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
  const float* half_scale = HalfScales().v;
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize, pairs = row_blocks / 2;
  __m256 acc[R][MB];
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
  __m256 x_scale[MB];
  for (int64_t p = 0; p < pairs; ++p) {
    const int64_t b = 2 * p;
    if (p % 2 == 0) {
      for (int r = 0; r < R; ++r, prefetch += 64) {
        if (prefetch < prefetch_end) _mm_prefetch(prefetch, _MM_HINT_T0);
      }
    }
    for (int m = 0; m < MB; ++m) {
      const float* xs = xa.scales + (m0 + m) * row_blocks + b;
      x_scale[m] = _mm256_setr_m128(_mm_broadcast_ss(xs), _mm_broadcast_ss(xs + 1));
    }
    for (int r = 0; r < R; ++r) {
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + r * row_bytes + b * 16));
      const uint8_t* e = ws + r * row_blocks + b;
      const __m256 w_scale = _mm256_setr_m128(_mm_broadcast_ss(half_scale + e[0]), _mm_broadcast_ss(half_scale + e[1]));
      AccumulatePair<MB>(bytes, w_scale, xa, m0 * xa.row + b * kMxfp4BlockSize, x_scale, acc[r]);
    }
  }
  if (row_blocks % 2 != 0) {  // a lone last block: the upper half of the pair is zero
    const int64_t b = row_blocks - 1;
    for (int m = 0; m < MB; ++m) x_scale[m] = _mm256_zextps128_ps256(_mm_broadcast_ss(xa.scales + (m0 + m) * row_blocks + b));
    for (int r = 0; r < R; ++r) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wp + r * row_bytes + b * 16));
      const __m256 w_scale = _mm256_broadcast_ss(half_scale + ws[r * row_blocks + b]);
      AccumulatePair<MB>(_mm256_zextsi128_si256(bytes), w_scale, xa, m0 * xa.row + b * kMxfp4BlockSize, x_scale, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) y[m * ldy + r] = HorizontalSum(acc[r][m]);
}

template <int R>
void GemvQ16Rows(const QuantisedActivations& xa, int64_t M, const uint8_t* wp, const uint8_t* ws, int64_t K,
                 const char* prefetch, const char* prefetch_end, float* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + 2 <= M; m += 2) GemvQ16Tile<R, 2>(xa, m, wp, ws, K, prefetch, prefetch_end, y + m * ldy, ldy);
  if (m < M) GemvQ16Tile<R, 1>(xa, m, wp, ws, K, prefetch, prefetch_end, y + m * ldy, ldy);
}

template <int R>
void GemvQ16Strips(const QuantisedActivations& xa, int64_t M, const uint8_t* wp, const uint8_t* ws, int64_t N,
                   int64_t K, float* y, int64_t ldy) {
  const int64_t row_bytes = K / 2, row_blocks = K / kMxfp4BlockSize;
  const char* end = reinterpret_cast<const char*>(wp + N * row_bytes);
  const int64_t distance = row_bytes <= kShortRowBytes ? kShortRowPrefetchBytes : 0;
  int64_t n = 0;
  for (; n + R <= N; n += R) {
    const char* strip = reinterpret_cast<const char*>(wp + n * row_bytes);
    GemvQ16Rows<R>(xa, M, wp + n * row_bytes, ws + n * row_blocks, K, distance != 0 ? strip + distance : end, end,
                   y + n, ldy);
  }
  for (; n < N; ++n) GemvQ16Rows<1>(xa, M, wp + n * row_bytes, ws + n * row_blocks, K, end, end, y + n, ldy);
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

void GemvMxfp4Q16(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  QuantisedActivations xa;
  QuantiseActivations(x, ldx, M, K, &xa);
  if (M == 1 && K / 2 > kShortRowBytes) {
    GemvQ16Strips<8>(xa, M, w_packed, w_scale, N, K, y, ldy);
  } else {
    GemvQ16Strips<4>(xa, M, w_packed, w_scale, N, K, y, ldy);
  }
}

void GemmMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
               int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  BlockedGemm(Mxfp4Packer{w_packed, w_scale, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
