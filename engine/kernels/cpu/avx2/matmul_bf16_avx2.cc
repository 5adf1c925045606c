// BF16-weight products with AVX2+FMA: a streaming, prefetching GEMV for decode batches and the
// blocked GEMM (gemm_driver_avx2.h) for prefill.
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "core/cpu_features.h"
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
// prefetcher picks up late, one 4 KiB page at a time. The tiles therefore prefetch in software,
// each by a policy (below) that one tile loop takes as a template argument: the matrix in
// address order 8 KiB ahead (short rows) or the same row 2 KiB ahead (long rows), which keeps
// the next strip's lines in flight while this one is summed (docs/kernels.md).

constexpr int64_t kBlock = 16;

// x rearranged per block of 16 (even elements, then odd) into xp (M × K floats); the K % 16
// tail stays in place.
void PermuteActivations(const float* x, int64_t ldx, int64_t M, int64_t K, float* xp) {
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
}

const float* PermutedActivations(const float* x, int64_t ldx, int64_t M, int64_t K) {
  float* xp = ThreadScratchArray<float>(ScratchSlot::kC, M * K);
  PermuteActivations(x, ldx, M, K, xp);
  return xp;
}

// ---- Prefetch policies ---------------------------------------------------------------------
//
// A tile calls its policy's Step once per 32 columns (two blocks, i.e. one 64-byte line of each
// of its R rows), so one tile loop serves every way of running ahead of the reads.

// Nothing: the last strips of a call, and tiles whose weights are already in L2.
struct NoPrefetch {
  template <int R>
  void Step(const uint16_t*, int64_t, int64_t) {}
};

// The same columns of each of the tile's R rows, `distance` elements further along the matrix.
struct ColumnPrefetch {
  int64_t distance;
  template <int R>
  void Step(const uint16_t* w, int64_t K, int64_t k) {
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(w + r * K + k + distance), _MM_HINT_T0);
  }
};

// Lines in address order: R consecutive lines per step from `next`, one sequential stream the
// hardware prefetcher follows and extends. The caller keeps [next, next + lines) inside the
// matrix, so the step has no bounds check.
struct LinearPrefetch {
  const char* next;
  template <int R>
  void Step(const uint16_t*, int64_t, int64_t) {
    for (int r = 0; r < R; ++r, next += 64) _mm_prefetch(next, _MM_HINT_T0);
  }
};

// LinearPrefetch that stops at `end`: the last strips of a matrix.
struct BoundedLinearPrefetch {
  const char* next;
  const char* end;
  template <int R>
  void Step(const uint16_t*, int64_t, int64_t) {
    for (int r = 0; r < R && next < end; ++r, next += 64) _mm_prefetch(next, _MM_HINT_T0);
  }
};

template <int R, int MB>
inline void ZeroTile(__m256 (&acc)[R][MB]) {
  for (int r = 0; r < R; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
}

// y[m, r] = the 8 lanes of acc[r][m] summed, plus the K % 16 tail in scalar order, for the
// first `rows` activation rows (x: their values, stride ldx; the tail is in natural order in
// both the activations and their permuted copies).
template <int R, int MB>
inline void StoreTileSums(const __m256 (&acc)[R][MB], int64_t rows, const float* x, int64_t ldx,
                          const uint16_t* w, int64_t K, float* y, int64_t ldy) {
  const int64_t k16 = K - K % kBlock;
  for (int r = 0; r < R; ++r) {
    for (int m = 0; m < rows; ++m) {
      float s = HorizontalSum(acc[r][m]);
      for (int64_t k = k16; k < K; ++k) s += Bf16Scalar(w[r * K + k]) * x[m * ldx + k];
      y[m * ldy + r] = s;
    }
  }
}

// The sums of one block of 16 columns, R weight rows × MB activation rows (xp: permuted rows,
// stride K). Every accumulator takes the even product of the block, then the odd one, whatever
// MB is, so a row's result does not depend on the batch it is in (matmul_test's
// BatchedRowsEqualRowsAlone).
//
// One activation row: the row's even and odd halves stay in two registers for the whole strip,
// and each weight vector is one load, a shift (even values) and a mask with a memory operand
// (odd values) feeding two FMAs.
//
// Several rows: each weight block is converted once per tile and summed in two halves (the 8
// even values for every row, then the 8 odd ones) so that only R converted vectors are live
// beside the R·MB accumulators. This intrinsic form serves the odd last weight row of a batch
// (R = 1); strips of two rows take PairHalfBlock below. Left to itself GCC folds each
// activation load into both of its FMAs and then runs out of registers and spills
// accumulators; the empty asm pins the loaded vector in a register.
template <int R, int MB>
[[gnu::always_inline]] inline void TileBlock(const float* xp, const uint16_t* w, int64_t K, int64_t k, __m256 (&acc)[R][MB]) {
  if constexpr (MB == 1) {
    const __m256i high_half = _mm256_set1_epi32(int(0xffff0000u));
    const __m256 x_even = _mm256_loadu_ps(xp + k), x_odd = _mm256_loadu_ps(xp + k + 8);
    for (int r = 0; r < R; ++r) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k));
      acc[r][0] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(v, 16)), x_even, acc[r][0]);
      acc[r][0] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(v, high_half)), x_odd, acc[r][0]);
    }
  } else {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k));
      wv[r] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    }
    for (int m = 0; m < MB; ++m) {
      __m256 xv = _mm256_loadu_ps(xp + m * K + k);
      asm("" : "+x"(xv));
      for (int r = 0; r < R; ++r) acc[r][m] = _mm256_fmadd_ps(wv[r], xv, acc[r][m]);
    }
    for (int r = 0; r < R; ++r) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k));
      wv[r] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(v, 16), 16));
    }
    for (int m = 0; m < MB; ++m) {
      __m256 xv = _mm256_loadu_ps(xp + m * K + k + 8);
      asm("" : "+x"(xv));
      for (int r = 0; r < R; ++r) acc[r][m] = _mm256_fmadd_ps(wv[r], xv, acc[r][m]);
    }
  }
}

// ---- The batch tile: 2 weight rows × MB activation rows, in assembly --------------------
//
// Half a block (the 8 even or the 8 odd values of 16 columns) of a 2 × MB tile, written out
// so that the register use is fixed: the 2·MB accumulators and the mask stay in registers the
// compiler chose, and ymm12–14 hold the two converted weight vectors and one activation
// vector. Compiled from intrinsics, the same tile kept one accumulator on the stack, spent
// two shifts on each odd weight vector (a mask in a register would have taken the 16th
// register) and one pointer increment per activation row, ~103 instructions per 48 FMAs;
// this form is ~83 (docs/kernels.md). Per half block and weight row:
//   odd values: one vpand of the loaded row with the mask (load folded into the AND);
//   even values: the same AND on the 32 bytes that start one BF16 value earlier, whose lanes
//     hold element 2i in their high half; the first block of a row, which has no value before
//     it, shifts instead (kEvenShift).
// The values are the same as the shift and mask give (the products and their order are
// unchanged), so a row's sums stay bit-identical to batch 1's. vpand runs on any FP pipe,
// where the shifts took pipes shared with the FMAs.
// The asm reads the weights and the permuted activations through its pointer operands; the
// "memory" clobber keeps it after the stores that wrote them.
enum class PairHalf { kEvenShift, kEvenFromOffset, kOdd };

struct PairAccumulators {
  __m256 a00, a01, a02, a03, a04, a05, a10, a11, a12, a13, a14, a15;
};

#define KIMI_BF16_X0 "(%[x])"
#define KIMI_BF16_X1 "(%[x],%[s],1)"
#define KIMI_BF16_X2 "(%[x],%[s],2)"
#define KIMI_BF16_X3 "(%[x3])"
#define KIMI_BF16_X4 "(%[x],%[s],4)"
#define KIMI_BF16_X5 "(%[x3],%[s],2)"
#define KIMI_BF16_ROW(m)                          \
  "vmovups " KIMI_BF16_X##m ", %%ymm14\n\t"       \
  "vfmadd231ps %%ymm12, %%ymm14, %[a0" #m "]\n\t" \
  "vfmadd231ps %%ymm13, %%ymm14, %[a1" #m "]\n\t"
#define KIMI_BF16_ODD "vpand (%[w]), %[mask], %%ymm12\n\tvpand (%[w],%[ws],1), %[mask], %%ymm13\n\t"
#define KIMI_BF16_EVEN_FROM_OFFSET \
  "vpand -2(%[w]), %[mask], %%ymm12\n\tvpand -2(%[w],%[ws],1), %[mask], %%ymm13\n\t"
#define KIMI_BF16_EVEN_SHIFT                                                 \
  "vmovdqu (%[w]), %%ymm12\n\tvmovdqu (%[w],%[ws],1), %%ymm13\n\t"           \
  "vpslld $16, %%ymm12, %%ymm12\n\tvpslld $16, %%ymm13, %%ymm13\n\t"
#define KIMI_BF16_ACC(m) [a0##m] "+x"(acc.a0##m), [a1##m] "+x"(acc.a1##m)
#define KIMI_BF16_IN \
  [w] "r"(wk), [ws] "r"(w_stride), [x] "r"(xk), [x3] "r"(x3), [s] "r"(x_stride), [mask] "x"(mask)
#define KIMI_BF16_CLOBBER "xmm12", "xmm13", "xmm14", "memory"
// One asm statement per (half, MB): the template must be a literal.
#define KIMI_BF16_HALF(CONVERT, ROWS, ...) asm(CONVERT ROWS : __VA_ARGS__ : KIMI_BF16_IN : KIMI_BF16_CLOBBER)
#define KIMI_BF16_HALVES(ROWS, ...)                                            \
  if constexpr (Half == PairHalf::kOdd) {                                     \
    KIMI_BF16_HALF(KIMI_BF16_ODD, ROWS, __VA_ARGS__);                         \
  } else if constexpr (Half == PairHalf::kEvenFromOffset) {                   \
    KIMI_BF16_HALF(KIMI_BF16_EVEN_FROM_OFFSET, ROWS, __VA_ARGS__);            \
  } else {                                                                    \
    KIMI_BF16_HALF(KIMI_BF16_EVEN_SHIFT, ROWS, __VA_ARGS__);                  \
  }

// acc.a{r}{m} += (the Half values of w's rows r = 0, 1 at wk) · (activation row m at xk).
template <int MB, PairHalf Half>
[[gnu::always_inline]] inline void PairHalfBlock(const float* xk, int64_t K, const uint16_t* wk, __m256 mask,
                                                 PairAccumulators& acc) {
  const int64_t w_stride = 2 * K, x_stride = 4 * K;
  const float* x3 = xk + 3 * K;
  if constexpr (MB == 6) {
    KIMI_BF16_HALVES(KIMI_BF16_ROW(0) KIMI_BF16_ROW(1) KIMI_BF16_ROW(2) KIMI_BF16_ROW(3) KIMI_BF16_ROW(4) KIMI_BF16_ROW(5),
                     KIMI_BF16_ACC(0), KIMI_BF16_ACC(1), KIMI_BF16_ACC(2), KIMI_BF16_ACC(3), KIMI_BF16_ACC(4), KIMI_BF16_ACC(5))
  } else if constexpr (MB == 5) {
    KIMI_BF16_HALVES(KIMI_BF16_ROW(0) KIMI_BF16_ROW(1) KIMI_BF16_ROW(2) KIMI_BF16_ROW(3) KIMI_BF16_ROW(4),
                     KIMI_BF16_ACC(0), KIMI_BF16_ACC(1), KIMI_BF16_ACC(2), KIMI_BF16_ACC(3), KIMI_BF16_ACC(4))
  } else if constexpr (MB == 4) {
    KIMI_BF16_HALVES(KIMI_BF16_ROW(0) KIMI_BF16_ROW(1) KIMI_BF16_ROW(2) KIMI_BF16_ROW(3),
                     KIMI_BF16_ACC(0), KIMI_BF16_ACC(1), KIMI_BF16_ACC(2), KIMI_BF16_ACC(3))
  } else if constexpr (MB == 3) {
    KIMI_BF16_HALVES(KIMI_BF16_ROW(0) KIMI_BF16_ROW(1) KIMI_BF16_ROW(2), KIMI_BF16_ACC(0), KIMI_BF16_ACC(1),
                     KIMI_BF16_ACC(2))
  } else {
    static_assert(MB == 2);
    KIMI_BF16_HALVES(KIMI_BF16_ROW(0) KIMI_BF16_ROW(1), KIMI_BF16_ACC(0), KIMI_BF16_ACC(1))
  }
}

#undef KIMI_BF16_HALVES
#undef KIMI_BF16_HALF
#undef KIMI_BF16_CLOBBER
#undef KIMI_BF16_IN
#undef KIMI_BF16_ACC
#undef KIMI_BF16_EVEN_SHIFT
#undef KIMI_BF16_EVEN_FROM_OFFSET
#undef KIMI_BF16_ODD
#undef KIMI_BF16_ROW
#undef KIMI_BF16_X5
#undef KIMI_BF16_X4
#undef KIMI_BF16_X3
#undef KIMI_BF16_X2
#undef KIMI_BF16_X1
#undef KIMI_BF16_X0

// One block of 16 columns: the even half (by `Even`), then the odd half.
template <int MB, PairHalf Even>
[[gnu::always_inline]] inline void PairBlock(const float* xp, const uint16_t* w, int64_t K, int64_t k, __m256 mask,
                                             PairAccumulators& acc) {
  PairHalfBlock<MB, Even>(xp + k, K, w + k, mask, acc);
  PairHalfBlock<MB, PairHalf::kOdd>(xp + k + kBlock / 2, K, w + k, mask, acc);
}

// The 2 × MB tile's loop (GemvTile's shape: two blocks per prefetch step). The accumulators
// are a struct of named vectors rather than an array: with the array GCC stored all of them
// to the stack on every step.
template <int MB, class Prefetch>
inline void GemvPairTile(const float* xp, const uint16_t* w, int64_t K, Prefetch prefetch, float* y, int64_t ldy) {
  const int64_t k16 = K - K % kBlock;
  const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(int(0xffff0000u)));
  const __m256 z = _mm256_setzero_ps();
  PairAccumulators a{z, z, z, z, z, z, z, z, z, z, z, z};
  int64_t k = 0;
  if (k16 > 0) {
    prefetch.template Step<2>(w, K, 0);
    PairBlock<MB, PairHalf::kEvenShift>(xp, w, K, 0, mask, a);
    if (k16 > kBlock) PairBlock<MB, PairHalf::kEvenFromOffset>(xp, w, K, kBlock, mask, a);
    k = 2 * kBlock;
  }
  for (; k + 2 * kBlock <= k16; k += 2 * kBlock) {
    prefetch.template Step<2>(w, K, k);
    PairBlock<MB, PairHalf::kEvenFromOffset>(xp, w, K, k, mask, a);
    PairBlock<MB, PairHalf::kEvenFromOffset>(xp, w, K, k + kBlock, mask, a);
  }
  if (k < k16) {
    prefetch.template Step<2>(w, K, k);
    PairBlock<MB, PairHalf::kEvenFromOffset>(xp, w, K, k, mask, a);
  }
  const __m256 rows[2][6] = {{a.a00, a.a01, a.a02, a.a03, a.a04, a.a05}, {a.a10, a.a11, a.a12, a.a13, a.a14, a.a15}};
  __m256 acc[2][MB];
  for (int r = 0; r < 2; ++r)
    for (int m = 0; m < MB; ++m) acc[r][m] = rows[r][m];
  StoreTileSums<2, MB>(acc, MB, xp, K, w, K, y, ldy);
}

// y[m, r] = Σ_k x[m, k]·w[r, k] for a strip of R weight rows and MB activation rows, two blocks
// (one 64-byte line of each row) per step, `prefetch` running ahead of the reads. Inlining the
// tile into its caller made GCC spill the 2 × 6 tile's accumulators and pointers.
template <int R, int MB, class Prefetch>
[[gnu::noinline]] void GemvTile(const float* xp, const uint16_t* w, int64_t K, Prefetch prefetch, float* y, int64_t ldy) {
  if constexpr (R == 2 && MB > 1) {
    GemvPairTile<MB>(xp, w, K, prefetch, y, ldy);
    return;
  }
  const int64_t k16 = K - K % kBlock;
  __m256 acc[R][MB];
  ZeroTile(acc);
  int64_t k = 0;
  for (; k + 2 * kBlock <= k16; k += 2 * kBlock) {
    prefetch.template Step<R>(w, K, k);
    TileBlock<R, MB>(xp, w, K, k, acc);
    TileBlock<R, MB>(xp, w, K, k + kBlock, acc);
  }
  if (k < k16) {
    prefetch.template Step<R>(w, K, k);
    TileBlock<R, MB>(xp, w, K, k, acc);
  }
  StoreTileSums<R, MB>(acc, MB, xp, K, w, K, y, ldy);
}

// One tile of the strip [0, R) of w: MB = mb activation rows.
template <int R, class Prefetch>
void GemvTileOf(int64_t mb, const float* xm, const uint16_t* w, int64_t K, Prefetch prefetch, float* ym, int64_t ldy) {
  switch (mb) {
    case 6: GemvTile<R, 6>(xm, w, K, prefetch, ym, ldy); break;
    case 5: GemvTile<R, 5>(xm, w, K, prefetch, ym, ldy); break;
    case 4: GemvTile<R, 4>(xm, w, K, prefetch, ym, ldy); break;
    case 3: GemvTile<R, 3>(xm, w, K, prefetch, ym, ldy); break;
    case 2: GemvTile<R, 2>(xm, w, K, prefetch, ym, ldy); break;
    default: GemvTile<R, 1>(xm, w, K, prefetch, ym, ldy); break;
  }
}

// ---- Which prefetch a strip takes ---------------------------------------------------------
//
// Short rows (K <= kLinearPrefetchMaxK, k3-mini's 1–3 KiB): the matrix in address order, R
// lines per step from kLinearPrefetchBytes past the strip's first byte, so the prefetch runs
// ahead of the reads by that distance as one sequential stream. One stream of consecutive
// lines is what the hardware prefetcher follows best, and it ran ahead further than a
// column-wise prefetch (R separate streams, one line each per step). Best of 15 passes over
// k3-mini's 201.6 MB of BF16 matrices in the mapped model file, thread CPU time (load 7):
// 9.9 GB/s with 8-row strips and the column-wise prefetch, 11.8 GB/s like this (median 8.8 →
// 10.6), against 14.8 GB/s for a plain sum; 4-row strips with 6–10 KiB distances, T1 or NTA
// hints, or 3/6/8-row strips measured the same or lower (docs/kernels.md).
// Long rows: the same columns kLongRowPrefetch values further along each row, and nothing for
// the last strip of the call.
constexpr int64_t kLinearPrefetchMaxK = 2048;
constexpr int64_t kLinearPrefetchBytes = 8192;
// The first tile of a batch group spends up to 6× batch 1's FMAs on each weight line, so it
// moves through the matrix more slowly: 4 KiB ahead measured a few percent faster than 8 KiB
// at 8–32 rows, batch 1 unchanged (docs/benchmarks.md, "BF16 batch tiles in assembly").
constexpr int64_t kBatchLinearPrefetchBytes = 4096;
constexpr int64_t kLongRowPrefetch = 1024;

// Runs tile(prefetch) with the policy for the R-row strip at row n of w[N, K].
template <int R, class Tile>
inline void WithStripPrefetch(const uint16_t* w, int64_t n, int64_t N, int64_t K, int64_t ahead_bytes, Tile&& tile) {
  if (K > kLinearPrefetchMaxK) {
    if (n + 2 * R <= N) {
      tile(ColumnPrefetch{kLongRowPrefetch});
    } else {
      tile(NoPrefetch{});
    }
    return;
  }
  const char* ahead = reinterpret_cast<const char*>(w + n * K) + ahead_bytes;
  const char* end = reinterpret_cast<const char*>(w + N * K);
  if (ahead + 2 * R * K <= end) {
    tile(LinearPrefetch{ahead});
  } else {
    tile(BoundedLinearPrefetch{ahead, end});
  }
}

// ---- Batch 1 ------------------------------------------------------------------------------
//
// Strips of 4 weight rows (short rows) or 8 (long rows: 8 independent sums), the last rows
// alone without prefetch.
template <int R>
void GemvSingleRowStrips(const float* xp, const uint16_t* w, int64_t N, int64_t K, float* y) {
  int64_t n = 0;
  for (; n + R <= N; n += R) {
    WithStripPrefetch<R>(w, n, N, K, kLinearPrefetchBytes, [&](auto prefetch) { GemvTile<R, 1>(xp, w + n * K, K, prefetch, y + n, 1); });
  }
  for (; n < N; ++n) GemvTile<1, 1>(xp, w + n * K, K, NoPrefetch{}, y + n, 1);
}

// ---- Several activation rows --------------------------------------------------------------
//
// The rows are cut into ceil(M / 6) tiles of near-equal height (16 rows: 6, 5, 5, so that no
// tile is a lone row paying the conversions for 2 FMAs), and the weight rows into groups of
// ~128 KiB: each tile runs over a whole group in strips of 2 weight rows (the odd last row
// alone) before the next tile starts. A tile's activations (6 rows × K floats, 24 KiB at
// K = 1024) then stay in L1 while the group passes, and the group comes from memory once, for
// the first tile (which alone prefetches, with batch 1's policy), and from L2 for the others.
// Sweeping all 16 rows per strip instead re-reads 64 KiB of activations from L2 for every
// 2 weight rows, and L2's 32 bytes per cycle then cap the FMAs at about half their peak.
// Measured and not kept (docs/kernels.md): every tile prefetching a share of the next group
// (slower than no prefetch at all), 3 × 4 tiles (spills), 64 or 256 KiB groups.
constexpr int64_t kBatchGroupBytes = 128 * 1024;

// The loop described above, over groups and tiles, for a tile kind T: T::kStripRows weight rows per
// strip, tiles of at most T::kMaxTileUnits activation units (a row, or a pair of rows for
// the 512-bit tiles), t.Strip(u, ub, n, prefetch) for the tile of units [u, u + ub) over the
// strip at weight row n, t.Rest(u, ub, n, rows) for the group's last rows (fewer than a strip).
template <class T>
void GemvBatch(const T& t, int64_t units, const uint16_t* w, int64_t N, int64_t K) {
  constexpr int R = T::kStripRows;
  const int64_t group = std::max<int64_t>(R, kBatchGroupBytes / (2 * K) / R * R);
  for (int64_t n0 = 0; n0 < N; n0 += group) {
    const int64_t n1 = std::min(N, n0 + group);
    for (int64_t u = 0; u < units;) {
      const int64_t left = units - u, tiles = (left + T::kMaxTileUnits - 1) / T::kMaxTileUnits;
      const int64_t ub = (left + tiles - 1) / tiles;
      int64_t n = n0;
      for (; n + R <= n1; n += R) {
        if (u == 0) {
          WithStripPrefetch<R>(w, n, N, K, kBatchLinearPrefetchBytes,
                               [&](auto prefetch) { t.Strip(u, ub, n, prefetch); });
        } else {
          t.Strip(u, ub, n, NoPrefetch{});
        }
      }
      if (n < n1) t.Rest(u, ub, n, n1 - n);
      u += ub;
    }
  }
}

// 256-bit tiles: rows of the permuted activations xp, 2 weight rows per strip.
struct Ymm2xTiles {
  static constexpr int kStripRows = 2;
  static constexpr int64_t kMaxTileUnits = 6;
  const float* xp;
  const uint16_t* w;
  int64_t K;
  float* y;
  int64_t ldy;
  template <class Prefetch>
  void Strip(int64_t m, int64_t mb, int64_t n, Prefetch prefetch) const {
    GemvTileOf<2>(mb, xp + m * K, w + n * K, K, prefetch, y + m * ldy + n, ldy);
  }
  void Rest(int64_t m, int64_t mb, int64_t n, int64_t) const {
    GemvTileOf<1>(mb, xp + m * K, w + n * K, K, NoPrefetch{}, y + m * ldy + n, ldy);
  }
};

// ---- Several activation rows in 512-bit registers (AVX-512F) ---------------------------------
//
// The same products, lane for lane, as the 256-bit tiles, with two activation rows per
// register: a register's low 8 lanes are row 2p's accumulator, its high 8 lanes row 2p + 1's,
// each taking exactly the FMAs (even product, then odd, block after block) of the 256-bit
// accumulator for that row, and summed by the same HorizontalSum, so every row stays
// bit-identical to batch 1. A weight half block is one broadcast load of 32 bytes into both
// halves and one AND (the even values through the load one value earlier, as in the
// assembly tile; a shift for a row's first block); the activations are laid out so that a pair
// of rows' half block is one 64-byte load (PairedActivations). Each 512-bit FMA does the work
// of two 256-bit ones at the same issue rate on this machine's cores (docs/kernels.md), and
// 32 registers hold a 4 weight rows × 4 pairs tile (16 accumulators) with no spill.
//
// Layout of the paired activations: per pair p, per block of 16 columns, 32 floats: row 2p's
// 8 even values, row 2p + 1's 8 even values, row 2p's 8 odd values, row 2p + 1's 8 odd values
// (zeros for the missing row of an odd M). The K % 16 tail is read from x itself. Pair-major,
// a tile's activations are a few contiguous runs that spread over all of L1's sets; block-major
// (every pair's half block side by side) put a 4-pair tile's lines in half the sets, where they
// evicted each other, and the second tile of a 16-row batch ran at half speed.
#define KIMI_AVX512 gnu::target("avx512f")
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

int64_t PairedFloats(int64_t M, int64_t K) { return std::max<int64_t>(1, K / kBlock * ((M + 1) / 2) * 2 * kBlock); }

void PairActivations(const float* x, int64_t ldx, int64_t M, int64_t K, float* xq) {
  const int64_t pairs = (M + 1) / 2, blocks = K / kBlock;
  for (int64_t p = 0; p < pairs; ++p) {
    for (int half = 0; half < 2; ++half) {
      const int64_t m = 2 * p + half;
      for (int64_t b = 0; b < blocks; ++b) {
        float* dst = xq + (p * blocks + b) * 2 * kBlock + half * 8;
        __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
        if (m < M) {
          const __m256 lo = _mm256_loadu_ps(x + m * ldx + b * kBlock),
                       hi = _mm256_loadu_ps(x + m * ldx + b * kBlock + 8);
          even = EvenElements(lo, hi);
          odd = OddElements(lo, hi);
        }
        _mm256_storeu_ps(dst, even);
        _mm256_storeu_ps(dst + kBlock, odd);
      }
    }
  }
}

const float* PairedActivations(const float* x, int64_t ldx, int64_t M, int64_t K) {
  float* xq = ThreadScratchArray<float>(ScratchSlot::kC, PairedFloats(M, K));
  PairActivations(x, ldx, M, K, xq);
  return xq;
}

// One block of 16 columns of an R × TP tile: xb points at the tile's first pair in the block,
// the next pair `pair_stride` floats further.
template <int R, int TP, bool kFirstBlock>
[[gnu::always_inline, KIMI_AVX512]] inline void ZmmBlock(const float* xb, int64_t pair_stride,
                                                         const uint16_t* w, int64_t K, int64_t k,
                                                         __m512i mask, __m512 (&acc)[R][TP]) {
  __m512 wv[R];
  for (int r = 0; r < R; ++r) {
    const uint16_t* row = w + r * K + k;
    if constexpr (kFirstBlock) {
      const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)));
      wv[r] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    } else {
      const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row - 1)));
      wv[r] = _mm512_castsi512_ps(_mm512_and_si512(v, mask));
    }
  }
  for (int t = 0; t < TP; ++t) {
    __m512 xv = _mm512_loadu_ps(xb + t * pair_stride);
    asm("" : "+v"(xv));
    for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
  }
  for (int r = 0; r < R; ++r) {
    const __m512i v =
        _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * K + k)));
    wv[r] = _mm512_castsi512_ps(_mm512_and_si512(v, mask));
  }
  for (int t = 0; t < TP; ++t) {
    __m512 xv = _mm512_loadu_ps(xb + t * pair_stride + kBlock);
    asm("" : "+v"(xv));
    for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
  }
}

// The R × TP tile over the whole row (GemvTile's loop: two blocks per prefetch step). xq: the
// tile's first pair, `pair_stride` floats from one pair to the next; x: the tile's `rows`
// (<= 2 TP) activation rows for the K % 16 tail.
template <int R, int TP, class Prefetch>
[[gnu::noinline, KIMI_AVX512]] void ZmmTile(const float* xq, int64_t pair_stride, const uint16_t* w,
                                            int64_t K, Prefetch prefetch, int64_t rows, const float* x,
                                            int64_t ldx, float* y, int64_t ldy) {
  const int64_t k16 = K - K % kBlock;
  const __m512i mask = _mm512_set1_epi32(int(0xffff0000u));
  __m512 acc[R][TP];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TP; ++t) acc[r][t] = _mm512_setzero_ps();
  int64_t k = 0;
  if (k16 > 0) {
    prefetch.template Step<R>(w, K, 0);
    ZmmBlock<R, TP, true>(xq, pair_stride, w, K, 0, mask, acc);
    if (k16 > kBlock) ZmmBlock<R, TP, false>(xq + 2 * kBlock, pair_stride, w, K, kBlock, mask, acc);
    xq += 4 * kBlock;
    k = 2 * kBlock;
  }
  for (; k + 2 * kBlock <= k16; k += 2 * kBlock, xq += 4 * kBlock) {
    prefetch.template Step<R>(w, K, k);
    ZmmBlock<R, TP, false>(xq, pair_stride, w, K, k, mask, acc);
    ZmmBlock<R, TP, false>(xq + 2 * kBlock, pair_stride, w, K, k + kBlock, mask, acc);
  }
  if (k < k16) {
    prefetch.template Step<R>(w, K, k);
    ZmmBlock<R, TP, false>(xq, pair_stride, w, K, k, mask, acc);
  }
  __m256 halves[R][2 * TP];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < TP; ++t) {
      halves[r][2 * t] = _mm512_castps512_ps256(acc[r][t]);
      halves[r][2 * t + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r][t]), 1));
    }
  }
  StoreTileSums<R, 2 * TP>(halves, rows, x, ldx, w, K, y, ldy);
}

// 512-bit tiles: units are pairs of activation rows, 4 weight rows per strip.
struct Zmm4xTiles {
  static constexpr int kStripRows = 4;
  static constexpr int64_t kMaxTileUnits = 4;
  const float* xq;
  const float* x;
  int64_t ldx, M;
  const uint16_t* w;
  int64_t K;
  float* y;
  int64_t ldy;

  template <int R, class Prefetch>
  void Tile(int64_t p, int64_t tp, int64_t n, Prefetch prefetch) const {
    const int64_t stride = K / kBlock * 2 * kBlock, rows = std::min(M - 2 * p, 2 * tp);
    const float* xt = xq + p * stride;
    const uint16_t* strip = w + n * K;
    const float* xm = x + 2 * p * ldx;
    float* ym = y + 2 * p * ldy + n;
    switch (tp) {
      case 4: ZmmTile<R, 4>(xt, stride, strip, K, prefetch, rows, xm, ldx, ym, ldy); break;
      case 3: ZmmTile<R, 3>(xt, stride, strip, K, prefetch, rows, xm, ldx, ym, ldy); break;
      case 2: ZmmTile<R, 2>(xt, stride, strip, K, prefetch, rows, xm, ldx, ym, ldy); break;
      default: ZmmTile<R, 1>(xt, stride, strip, K, prefetch, rows, xm, ldx, ym, ldy); break;
    }
  }
  template <class Prefetch>
  void Strip(int64_t p, int64_t tp, int64_t n, Prefetch prefetch) const {
    Tile<kStripRows>(p, tp, n, prefetch);
  }
  void Rest(int64_t p, int64_t tp, int64_t n, int64_t rows) const {
    switch (rows) {
      case 3: Tile<3>(p, tp, n, NoPrefetch{}); break;
      case 2: Tile<2>(p, tp, n, NoPrefetch{}); break;
      default: Tile<1>(p, tp, n, NoPrefetch{}); break;
    }
  }
};

#pragma GCC diagnostic pop
#undef KIMI_AVX512

// Several activation rows against w: the 256-bit tiles on the permuted rows xp, the 512-bit
// tiles on the paired rows xq (x itself for the K % 16 tail).
void PermutedBatch(const float* xp, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
  GemvBatch(Ymm2xTiles{xp, w, K, y, ldy}, M, w, N, K);
}

void PairedBatch(const float* xq, const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                 float* y, int64_t ldy) {
  GemvBatch(Zmm4xTiles{xq, x, ldx, M, w, K, y, ldy}, (M + 1) / 2, w, N, K);
}

struct Bf16Packer {
  const uint16_t* w;
  int64_t K;
  void Pack(int64_t n0, int64_t rows, int64_t k0, int64_t kc, float* dst) const {
    PackPanels(rows, kc, dst, [&](int64_t n, float* column) {
      const uint16_t* src = w + (n0 + n) * K + k0;
      int64_t k = 0;
      for (; k + 8 <= kc; k += 8) {
        alignas(32) float tmp[8];
        _mm256_store_ps(tmp, LoadBf16x8(src + k));
        for (int i = 0; i < 8; ++i) column[(k + i) * kNR] = tmp[i];
      }
      for (; k < kc; ++k) column[k * kNR] = Bf16Scalar(src[k]);
    });
  }
};

}  // namespace

void GemvBf16Batch256(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                      float* y, int64_t ldy) {
  PermutedBatch(PermutedActivations(x, ldx, M, K), w, M, N, K, y, ldy);
}

void GemvBf16Batch512(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                      float* y, int64_t ldy) {
  PairedBatch(PairedActivations(x, ldx, M, K), x, ldx, w, M, N, K, y, ldy);
}

// The layout GemvBf16Prepared reads: pairs of rows (PairedActivations) for the 512-bit batch
// tiles, else each row permuted (PermutedActivations).
bool UsesPairedLayout(int64_t M) { return M > 1 && cpu::HasAvx512F(); }

int64_t GemvBf16PreparedFloats(int64_t M, int64_t K) { return UsesPairedLayout(M) ? PairedFloats(M, K) : M * K; }

void PrepareGemvBf16(const float* x, int64_t ldx, int64_t M, int64_t K, float* prepared) {
  if (UsesPairedLayout(M)) {
    PairActivations(x, ldx, M, K, prepared);
  } else {
    PermuteActivations(x, ldx, M, K, prepared);
  }
}

void GemvBf16Prepared(const float* prepared, const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N,
                      int64_t K, float* y, int64_t ldy) {
  if (UsesPairedLayout(M)) {
    PairedBatch(prepared, x, ldx, w, M, N, K, y, ldy);
  } else if (M > 1) {
    PermutedBatch(prepared, w, M, N, K, y, ldy);
  } else if (K <= kLinearPrefetchMaxK) {
    GemvSingleRowStrips<4>(prepared, w, N, K, y);
  } else {
    GemvSingleRowStrips<8>(prepared, w, N, K, y);
  }
}

void GemvBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  float* prepared = ThreadScratchArray<float>(ScratchSlot::kC, GemvBf16PreparedFloats(M, K));
  PrepareGemvBf16(x, ldx, M, K, prepared);
  GemvBf16Prepared(prepared, x, ldx, w, M, N, K, y, ldy);
}

void GemmBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy) {
  BlockedGemm(Bf16Packer{w, K}, x, ldx, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
