// The prefill GEMM on BF16 dot products: the activations split into two BF16 values once per
// call, the weights packed as pairs, and the products summed in fp32 by vdpbf16ps (AVX512-BF16)
// or by AMX tiles (tdpbf16ps). Both compute ref::MatmulBf16Dot up to the order of the fp32 sums.
//
// One packed layout serves both: a panel of 16 output columns holds, for each pair of k values,
// the two BF16 weights of each column side by side (64 bytes per pair of k), which is both the
// B operand of vdpbf16ps (16 fp32 lanes, each taking a pair) and AMX's B tile row. The blocks
// are those of the fp32 GEMM (gemm_driver_avx2.h): 128 columns × a k block packed once and run
// against every activation row, y = block sum, then y += block sum for the later k blocks.
//
// The functions carry their own target attributes; this file is compiled with the AVX2 flags
// like its neighbours, so nothing else in it may use AVX-512 or AMX, and the table calls these
// only where core/cpu_features.h says the CPU (and, for AMX, the OS) allows them.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/cpu_features.h"
#include "kernels/cpu/avx2/amx_tile_model.h"
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_driver_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kPanel = kNR;        // output columns per panel: one register of fp32 sums
constexpr int64_t kBlockCols = kNC;    // columns per packed block
// k per packed block. vdpbf16ps: a 12 × 32 tile reads two panels (2 × 16 KiB) and twelve split
// activation rows (24 KiB) per block; measured 0.88–0.91 of the instruction's rate on k3-mini
// and K3 shapes against 0.85–0.90 with blocks of 256 (fewer write-backs into y). AMX reads its
// tiles from L2 and takes the same length.
constexpr int64_t kBlockK512 = 512;
constexpr int64_t kBlockKAmx = 512;
constexpr int64_t kAmxK = 32;     // k values per AMX tile row (64 bytes of BF16)
constexpr int64_t kAmxRows = 16;  // rows of an AMX tile

int64_t RoundUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

#define KIMI_BF16DOT gnu::target("avx512f,avx512bw,avx512vl,avx512bf16")
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// Each activation is held as two BF16 values, x ≈ hi + lo (SplitBf16Activations, avx2.h): each
// product is within ~2^-17 of x·w instead of the 2^-9 of hi alone, which the engine's tolerance
// against the reference does not allow (docs/kernels.md, "BF16 dot products"). The weights are
// BF16 already, so hi·w and lo·w are exact and the only other rounding is the fp32 sums'.

// The row stride of the split activations for Kp values a row: one cache line more than the
// row, so that rows whose length is a multiple of 4 KiB do not all fall in the same L1 set,
// where the twelve rows a tile reads at once evicted each other (at K = 2048 and 4096 the GEMM
// measured 0.55–0.66 of the peak with rows packed end to end, 0.76–0.81 with this).
int64_t SplitRowStride(int64_t Kp) { return 2 * Kp + 32; }

}  // namespace

[[KIMI_BF16DOT]] void SplitBf16Activations(const float* x, int64_t ldx, int64_t M, int64_t K, int64_t Mp,
                                           int64_t Kp, SplitLayout layout, uint16_t* xb, int64_t ldxb) {
  // Dwords 0–7 of hi and of lo (a pair each), alternating: hi pair 0, lo pair 0, hi pair 1, …
  const __m512i interleave = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  for (int64_t m = 0; m < Mp; ++m) {
    uint16_t* dst = xb + m * ldxb;
    if (m >= M) {
      std::memset(dst, 0, size_t(2 * Kp) * sizeof(uint16_t));
      continue;
    }
    const float* src = x + m * ldx;
    for (int64_t k = 0; k < Kp; k += 16) {
      // Kp may pass K by up to 31 (AMX rounds K up to 32): those values are zeros.
      const int64_t valid = std::clamp<int64_t>(K - k, 0, 16), stored = std::min<int64_t>(16, Kp - k);
      const __m512 v = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << valid) - 1), src + k);
      const __m256bh hi = _mm512_cvtneps_pbh(v);
      const __m512 hi_value = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)hi), 16));
      const __m256bh lo = _mm512_cvtneps_pbh(_mm512_sub_ps(v, hi_value));
      if (layout == SplitLayout::kPairsInterleaved) {
        const __m512i pairs = _mm512_permutex2var_epi32(_mm512_castsi256_si512((__m256i)hi), interleave,
                                                        _mm512_castsi256_si512((__m256i)lo));
        _mm512_mask_storeu_epi32(dst + 2 * k, static_cast<__mmask16>((1u << stored) - 1), pairs);
      } else {
        const __mmask16 mask = static_cast<__mmask16>((1u << stored) - 1);
        _mm256_mask_storeu_epi16(dst + k, mask, (__m256i)hi);
        _mm256_mask_storeu_epi16(dst + Kp + k, mask, (__m256i)lo);
      }
    }
  }
}

namespace {

// r[i][j] = r[j][i] for 16 × 16 32-bit values (unpacks within 128-bit lanes, then two rounds of
// 128-bit lane shuffles).
[[KIMI_BF16DOT]] inline void Transpose16x16(__m512i (&r)[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8) {
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_i32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_i32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
  }
}

// `panels` panels of columns [n0, n0 + 16·panels) and k values [k0, k0 + kc) (kc even) of w
// (N × K, row-major): dst[p][kp][j] = the pair (w[n, k0 + 2kp], w[n, k0 + 2kp + 1]) of column
// n = n0 + 16p + j as one 32-bit word, zero past column n0 + cols or past k = K. A full panel
// goes 16 pairs at a time: 16 rows of 64 bytes loaded and transposed as 32-bit words.
[[KIMI_BF16DOT]] void PackPairPanels(const uint16_t* w, int64_t K, int64_t n0, int64_t cols, int64_t panels,
                                     int64_t k0, int64_t kc, uint16_t* dst) {
  const int64_t pairs = kc / 2;
  const int64_t valid = std::clamp<int64_t>(K - k0, 0, kc);  // k values of the block inside K
  for (int64_t p = 0; p < panels; ++p) {
    uint32_t* panel = reinterpret_cast<uint32_t*>(dst + p * kc * kPanel);
    int64_t vector_pairs = 0;
    if ((p + 1) * kPanel <= cols) {
      vector_pairs = valid / 32 * 16;
      for (int64_t kp = 0; kp < vector_pairs; kp += 16) {
        __m512i r[16];
        for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_si512(w + (n0 + p * kPanel + j) * K + k0 + 2 * kp);
        Transpose16x16(r);
        for (int i = 0; i < 16; ++i) _mm512_storeu_si512(panel + (kp + i) * kPanel, r[i]);
      }
    }
    for (int64_t j = 0; j < kPanel; ++j) {
      const int64_t n = p * kPanel + j;
      int64_t kp = vector_pairs;
      if (n < cols) {
        const uint16_t* src = w + (n0 + n) * K + k0;
        for (; 2 * kp + 1 < valid; ++kp) {
          uint32_t pair;
          std::memcpy(&pair, src + 2 * kp, sizeof pair);
          panel[kp * kPanel + j] = pair;
        }
        if (2 * kp < valid) {  // odd K: the last pair's second value is 0
          panel[kp * kPanel + j] = src[2 * kp];
          ++kp;
        }
      }
      for (; kp < pairs; ++kp) panel[kp * kPanel + j] = 0;
    }
  }
}

// ---- vdpbf16ps ------------------------------------------------------------------------------

using DotTileFn = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, int64_t, float*, int64_t, bool,
                           int64_t);

// C[MR, 16·NV] (+)= A[MR, kc] · (NV panels side by side), A split in kPairsInterleaved rows
// (row stride lda values): acc[r][v] takes, per pair of k, row r's hi pair and then its lo pair
// broadcast against panel v's pairs.
template <int MR, int NV>
[[gnu::noinline, KIMI_BF16DOT]] void DotTile(const uint16_t* a, int64_t lda, const uint16_t* bp, int64_t panel_stride,
                                             int64_t kc, float* c, int64_t ldc, bool accumulate, int64_t ncols) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t kp = 0; kp < kc / 2; ++kp) {
    __m512bh b[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) b[v] = (__m512bh)_mm512_loadu_si512(bp + v * panel_stride + kp * 2 * kPanel);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      int32_t hi, lo;
      std::memcpy(&hi, a + r * lda + 4 * kp, sizeof hi);
      std::memcpy(&lo, a + r * lda + 4 * kp + 2, sizeof lo);
      const __m512bh hv = (__m512bh)_mm512_set1_epi32(hi), lv = (__m512bh)_mm512_set1_epi32(lo);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(_mm512_dpbf16_ps(acc[r][v], lv, b[v]), hv, b[v]);
    }
  }
  StoreTile512<MR, NV>(acc, c, ldc, accumulate, ncols);
}

template <int NV, int... MR>
constexpr std::array<DotTileFn, kMR512 + 1> DotTiles(std::integer_sequence<int, MR...>) {
  return {nullptr, DotTile<MR + 1, NV>...};
}

// Every activation row against one packed block (nc columns, kc values of k).
void DotBlock(const uint16_t* xb, int64_t ldxb, int64_t M, const uint16_t* packed, int64_t nc, int64_t kc, float* y,
              int64_t ldy, bool accumulate) {
  static constexpr auto kTwo = DotTiles<2>(std::make_integer_sequence<int, kMR512>{});
  static constexpr auto kOne = DotTiles<1>(std::make_integer_sequence<int, kMR512>{});
  TileBlock512(kTwo, kOne, xb, ldxb, M, packed, nc, kc, y, ldy, accumulate);
}

// ---- AMX ------------------------------------------------------------------------------------

#define KIMI_AMX gnu::target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")

// The tiles (cpu::AmxTileConfig: all 16 rows of 64 bytes): 0–3 are the sums of a 32 × 32 output
// tile, 4–5 two 16-row slices of activations, 6–7 two panels of weights.
static_assert(kAmxRows == 16 && kAmxK * sizeof(uint16_t) == 64, "the tiles cpu::AmxTileConfig configures");

// GCC's tile macros paste their tile numbers into the instruction's text, so a template's tile
// number reaches them through one literal per tile.
#define KIMI_ON_TILE(T, op, ...)                \
  do {                                          \
    static_assert(0 <= (T) && (T) < 8);         \
    if constexpr ((T) == 0) op(0, ##__VA_ARGS__); \
    if constexpr ((T) == 1) op(1, ##__VA_ARGS__); \
    if constexpr ((T) == 2) op(2, ##__VA_ARGS__); \
    if constexpr ((T) == 3) op(3, ##__VA_ARGS__); \
    if constexpr ((T) == 4) op(4, ##__VA_ARGS__); \
    if constexpr ((T) == 5) op(5, ##__VA_ARGS__); \
    if constexpr ((T) == 6) op(6, ##__VA_ARGS__); \
    if constexpr ((T) == 7) op(7, ##__VA_ARGS__); \
  } while (0)

// The tile instructions themselves; TileModel (amx_tile_model.h) has the same members.
struct HardwareTiles {
  [[KIMI_AMX]] static void Configure(const void* config) { _tile_loadconfig(config); }
  [[KIMI_AMX]] static void Release() { _tile_release(); }
  template <int T>
  [[KIMI_AMX]] static void Zero() {
    KIMI_ON_TILE(T, _tile_zero);
  }
  template <int T>
  [[KIMI_AMX]] static void Load(const void* base, int64_t stride) {
    KIMI_ON_TILE(T, _tile_loadd, base, stride);
  }
  template <int T>
  [[KIMI_AMX]] static void Store(void* base, int64_t stride) {
    KIMI_ON_TILE(T, _tile_stored, base, stride);
  }
  // The sums' tiles D = 0–3, each with its activations' and weights' tiles (AmxBlock's four).
  template <int D, int A, int B>
  [[KIMI_AMX]] static void DotBf16() {
    static_assert(0 <= D && D < 4 && A == 4 + D / 2 && B == 6 + D % 2);
    if constexpr (D == 0) _tile_dpbf16ps(0, 4, 6);
    if constexpr (D == 1) _tile_dpbf16ps(1, 4, 7);
    if constexpr (D == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (D == 3) _tile_dpbf16ps(3, 5, 7);
  }
};
#undef KIMI_ON_TILE

// The tile instructions' GCC macros are asm statements that declare no memory operands; this
// barrier keeps the packing stores before the tile loads and the reads of `sums` after the
// tile stores.
inline void CompilerMemoryBarrier() { asm volatile("" ::: "memory"); }

// y rows [m0, m0 + 16) ∩ [0, M), columns [c0, c0 + 16) ∩ [0, nc) (+)= a 16 × 16 tile of sums.
[[KIMI_BF16DOT]] void AddTile(const float* sums, int64_t m0, int64_t M, int64_t c0, int64_t nc, float* y,
                              int64_t ldy, bool accumulate) {
  if (c0 >= nc) return;
  const __mmask16 mask = static_cast<__mmask16>((1u << std::min<int64_t>(kPanel, nc - c0)) - 1);
  for (int64_t i = 0; i < kAmxRows && m0 + i < M; ++i) {
    float* yr = y + (m0 + i) * ldy + c0;
    __m512 out = _mm512_loadu_ps(sums + i * kPanel);
    if (accumulate) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, yr));
    _mm512_mask_storeu_ps(yr, mask, out);
  }
}

// Every activation row (xb: Mp rows split in kHalvesSideBySide, the lo values lo_offset after the
// hi ones; Mp a multiple of 32, zero past M) against one packed block (panels: an even count,
// zero past nc; kc a multiple of 32), in 32 × 32 output tiles: the lo tiles, then the hi ones.
template <class Tiles>
[[KIMI_AMX]] void AmxBlock(const uint16_t* xb, int64_t lo_offset, int64_t ldxb, int64_t M, const uint16_t* packed,
                           int64_t panels, int64_t nc, int64_t kc, float* y, int64_t ldy, bool accumulate) {
  alignas(64) float sums[4][kAmxRows * kPanel];
  const int64_t x_stride = ldxb * int64_t(sizeof(uint16_t)), panel_row = 2 * kPanel * int64_t(sizeof(uint16_t));
  for (int64_t m0 = 0; m0 < M; m0 += 2 * kAmxRows) {
    const uint16_t* a0 = xb + m0 * ldxb;
    const uint16_t* a1 = a0 + kAmxRows * ldxb;
    for (int64_t p = 0; p < panels; p += 2) {
      const uint16_t* b0 = packed + p * kc * kPanel;
      const uint16_t* b1 = b0 + kc * kPanel;
      Tiles::template Zero<0>();
      Tiles::template Zero<1>();
      Tiles::template Zero<2>();
      Tiles::template Zero<3>();
      for (int64_t k = 0; k < kc; k += kAmxK) {
        Tiles::template Load<6>(b0 + k * kPanel, panel_row);  // k/2 pairs of 16 columns
        Tiles::template Load<7>(b1 + k * kPanel, panel_row);
        Tiles::template Load<4>(a0 + lo_offset + k, x_stride);
        Tiles::template Load<5>(a1 + lo_offset + k, x_stride);
        Tiles::template DotBf16<0, 4, 6>();
        Tiles::template DotBf16<1, 4, 7>();
        Tiles::template DotBf16<2, 5, 6>();
        Tiles::template DotBf16<3, 5, 7>();
        Tiles::template Load<4>(a0 + k, x_stride);
        Tiles::template Load<5>(a1 + k, x_stride);
        Tiles::template DotBf16<0, 4, 6>();
        Tiles::template DotBf16<1, 4, 7>();
        Tiles::template DotBf16<2, 5, 6>();
        Tiles::template DotBf16<3, 5, 7>();
      }
      Tiles::template Store<0>(sums[0], kPanel * int64_t(sizeof(float)));
      Tiles::template Store<1>(sums[1], kPanel * int64_t(sizeof(float)));
      Tiles::template Store<2>(sums[2], kPanel * int64_t(sizeof(float)));
      Tiles::template Store<3>(sums[3], kPanel * int64_t(sizeof(float)));
      CompilerMemoryBarrier();
      const int64_t c0 = p * kPanel;
      AddTile(sums[0], m0, M, c0, nc, y, ldy, accumulate);
      AddTile(sums[1], m0, M, c0 + kPanel, nc, y, ldy, accumulate);
      AddTile(sums[2], m0 + kAmxRows, M, c0, nc, y, ldy, accumulate);
      AddTile(sums[3], m0 + kAmxRows, M, c0 + kPanel, nc, y, ldy, accumulate);
    }
  }
}

#pragma GCC diagnostic pop
#undef KIMI_AMX
#undef KIMI_BF16DOT

}  // namespace

void GemmBf16Dot512(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                    int64_t ldy) {
  const int64_t Kp = RoundUp(K, 2), ldxb = SplitRowStride(Kp);
  uint16_t* xb = ThreadScratchArray<uint16_t>(ScratchSlot::kC, size_t(M * ldxb));
  SplitBf16Activations(x, ldx, M, K, M, Kp, SplitLayout::kPairsInterleaved, xb, ldxb);
  uint16_t* packed = ThreadScratchArray<uint16_t>(ScratchSlot::kA, size_t(kBlockCols * kBlockK512));
  for (int64_t n0 = 0; n0 < N; n0 += kBlockCols) {
    const int64_t nc = std::min(kBlockCols, N - n0);
    for (int64_t k0 = 0; k0 < Kp; k0 += kBlockK512) {
      const int64_t kc = std::min(kBlockK512, Kp - k0);
      PackPairPanels(w, K, n0, nc, (nc + kPanel - 1) / kPanel, k0, kc, packed);
      DotBlock(xb + 2 * k0, ldxb, M, packed, nc, kc, y + n0, ldy, k0 > 0);
    }
  }
}

namespace {

template <class Tiles>
void GemmBf16OnTiles(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                     int64_t ldy) {
  const int64_t Kp = RoundUp(K, kAmxK), Mp = RoundUp(M, 2 * kAmxRows), ldxb = SplitRowStride(Kp);
  uint16_t* xb = ThreadScratchArray<uint16_t>(ScratchSlot::kC, size_t(Mp * ldxb));
  SplitBf16Activations(x, ldx, M, K, Mp, Kp, SplitLayout::kHalvesSideBySide, xb, ldxb);
  uint16_t* packed = ThreadScratchArray<uint16_t>(ScratchSlot::kA, size_t(kBlockCols * kBlockKAmx));
  const cpu::AmxTileConfig config;
  Tiles::Configure(&config);
  for (int64_t n0 = 0; n0 < N; n0 += kBlockCols) {
    const int64_t nc = std::min(kBlockCols, N - n0);
    const int64_t panels = RoundUp((nc + kPanel - 1) / kPanel, 2);
    for (int64_t k0 = 0; k0 < Kp; k0 += kBlockKAmx) {
      const int64_t kc = std::min(kBlockKAmx, Kp - k0);
      PackPairPanels(w, K, n0, nc, panels, k0, kc, packed);
      CompilerMemoryBarrier();
      AmxBlock<Tiles>(xb + k0, Kp, ldxb, M, packed, panels, nc, kc, y + n0, ldy, k0 > 0);
    }
  }
  Tiles::Release();
}

}  // namespace

void GemmBf16Amx(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                 int64_t ldy) {
  GemmBf16OnTiles<HardwareTiles>(x, ldx, w, M, N, K, y, ldy);
}

void GemmBf16AmxOnTileModel(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                            float* y, int64_t ldy) {
  GemmBf16OnTiles<TileModel>(x, ldx, w, M, N, K, y, ldy);
}

}  // namespace kimi::kernels::avx2
