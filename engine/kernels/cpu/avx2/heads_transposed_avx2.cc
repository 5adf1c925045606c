// The W_UK absorption product with AVX2, outputs held in registers: a tile of up to 6 rows ×
// 16 output columns (one or two rows × 32 columns) accumulates over all n_in weight rows before it is stored, so each weight
// element is widened once per tile and each output is written once, where a row-by-row axpy
// loads and stores the outputs once per weight row. A tile's weights (n_in × 32 bytes) stay in
// L1 for the head's other row tiles.
// Compiled with -ffp-contract=off (kernels/CMakeLists.txt): the multiply and the add stay
// separate, as in the reference, and each output adds its products in n order, so the result is
// the reference's bit for bit whatever the tile.
#include "kernels/cpu/avx2/avx2.h"

#include <immintrin.h>

#include <algorithm>

#include "kimi/dtype.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int kTileRows = 6;  // 6 × 2 accumulators + 2 weights + 1 broadcast + 1 product: 16 registers

inline __m256 WidenBf16(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// Weight columns fetched ahead of the tile: two 64-byte lines (64 columns) along each row.
constexpr int64_t kPrefetchColumns = 64;

// Rows [0, R) × columns [0, 8·V) of one head: w points at column 0 of weight row 0. The tile
// walks its columns down the weight rows, n_out·2 bytes apart, so a 4 KiB page holds only a few
// of its lines and the hardware prefetcher, which stops at page boundaries, barely helps; with
// Prefetch it fetches the line kPrefetchColumns ahead in each row, which the column blocks after
// it will read. That pays at one or two rows, where the weights' arrival sets the pace (cold
// weights, k3-mini's shape: 1.5× faster at one row); with a tile of 6 rows the arithmetic hides
// the misses and the prefetches only cost (measured 1.3× slower at 16 rows), so it is off there.
template <int R, int V, bool Prefetch>
void Tile(const float* x, int64_t ldx, const uint16_t* w, int64_t n_in, int64_t n_out, float* y, int64_t ldy,
          bool prefetch) {
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  for (int64_t n = 0; n < n_in; ++n) {
    if (Prefetch && prefetch) _mm_prefetch(reinterpret_cast<const char*>(w + n * n_out + kPrefetchColumns), _MM_HINT_T0);
    __m256 wv[V];
    for (int v = 0; v < V; ++v) wv[v] = WidenBf16(w + n * n_out + 8 * v);
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(x + r * ldx + n);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_add_ps(acc[r][v], _mm256_mul_ps(a, wv[v]));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) _mm256_storeu_ps(y + r * ldy + 8 * v, acc[r][v]);
}

// Rows [0, M) × columns [0, 8·V) in tiles of up to MaxRows rows; with tiles of at most 2 rows
// the first one prefetches when `prefetch` (the weight columns ahead are still in the head).
template <int V, int MaxRows>
void ColumnBlock(int64_t M, const float* x, int64_t ldx, const uint16_t* w, int64_t n_in, int64_t n_out, float* y,
                 int64_t ldy, bool prefetch) {
  for (int64_t m = 0; m < M; m += MaxRows) {
    const float* xm = x + m * ldx;
    float* ym = y + m * ldy;
    const bool p = prefetch && m == 0;
    switch (std::min<int64_t>(MaxRows, M - m)) {
      case 6: if constexpr (MaxRows >= 6) Tile<6, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
      case 5: if constexpr (MaxRows >= 5) Tile<5, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
      case 4: if constexpr (MaxRows >= 4) Tile<4, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
      case 3: if constexpr (MaxRows >= 3) Tile<3, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
      case 2: if constexpr (MaxRows >= 2) Tile<2, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
      default: Tile<1, V, (MaxRows <= 2)>(xm, ldx, w, n_in, n_out, ym, ldy, p); break;
    }
  }
}

// The last n_out % 8 columns, one output at a time.
void Columns(int64_t rows, const float* x, int64_t ldx, const uint16_t* w, int64_t n_in, int64_t n_out,
             int64_t c0, float* y, int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = c0; c < n_out; ++c) {
      float acc = 0.0f;
      for (int64_t n = 0; n < n_in; ++n) acc += x[r * ldx + n] * Bf16ToF32(w[n * n_out + c]);
      y[r * ldy + c] = acc;
    }
  }
}

}  // namespace

void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         int64_t ldy) {
  for (int64_t h = 0; h < H; ++h) {
    const float* xh = x + h * x_head_stride;
    const uint16_t* wh = w + h * w_head_stride;
    float* yh = y + h * n_out;
    int64_t c = 0;
    // One or two rows: 32 columns per tile, so each weight row is read 64 bytes at a time.
    auto ahead = [&](int64_t col) { return col + kPrefetchColumns < n_out; };
    if (M <= 2) {
      for (; c + 32 <= n_out; c += 32) ColumnBlock<4, 2>(M, xh, ldx, wh + c, n_in, n_out, yh + c, ldy, ahead(c));
    }
    for (; c + 16 <= n_out; c += 16) {
      ColumnBlock<2, kTileRows>(M, xh, ldx, wh + c, n_in, n_out, yh + c, ldy, ahead(c));
    }
    for (; c + 8 <= n_out; c += 8) ColumnBlock<1, kTileRows>(M, xh, ldx, wh + c, n_in, n_out, yh + c, ldy, false);
    Columns(M, xh, ldx, wh, n_in, n_out, c, yh, ldy);
  }
}

}  // namespace kimi::kernels::avx2
