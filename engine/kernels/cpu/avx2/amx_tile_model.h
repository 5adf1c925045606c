// A scalar model of the AMX tile registers and of the four tile instructions the BF16 prefill
// GEMM uses (LDTILECFG's palette 1, TILEZERO, TILELOADD, TDPBF16PS, TILESTORED), written from the
// instructions' definitions in Intel's SDM: the GEMM's code runs on it where the CPU has no AMX
// (GemmBf16AmxOnTileModel, avx2.h), so that its layouts, loops and edges are tested on every
// CPU with AVX512-BF16. What the model cannot show is that the hardware agrees with it.
//
// TDPBF16PS dst, a, b: for each row m of dst, each dword k of a's row m (a BF16 pair) and each
// fp32 column n of dst: dst[m][n] += a[m].bf16[2k]·b[k].bf16[2n], then
// dst[m][n] += a[m].bf16[2k+1]·b[k].bf16[2n+1], each a fused multiply-add rounded to nearest
// even; BF16 inputs that are denormal count as zero and denormal results are flushed to zero,
// whatever MXCSR says. The model checks the shapes the SDM requires of the configured tiles
// (a.rows = dst.rows, a.colsb = 4·b.rows, b.colsb = dst.colsb) and aborts where they do not hold,
// as the instruction would fault.
// Thread safety: the registers are per thread, like the hardware's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kimi::kernels::avx2 {

// One tile register: its configured shape and its contents.
struct ModelTile {
  static constexpr int kMaxRows = 16, kMaxColsb = 64;
  int rows = 0, colsb = 0;
  alignas(64) uint8_t bytes[kMaxRows][kMaxColsb] = {};
};

struct TileModel {
  using Tile = ModelTile;
  static constexpr int kTiles = 8, kMaxRows = Tile::kMaxRows, kMaxColsb = Tile::kMaxColsb;
  static inline thread_local Tile tiles[kTiles];

  // The LDTILECFG operand's layout (64 bytes: palette, start row, reserved, colsb[16], rows[16]).
  static void Configure(const void* config) {
    const auto* c = static_cast<const uint8_t*>(config);
    Require(c[0] == 1, "palette 1");
    for (int t = 0; t < kTiles; ++t) {
      uint16_t colsb;
      std::memcpy(&colsb, c + 16 + 2 * t, sizeof colsb);
      tiles[t] = Tile{};
      tiles[t].rows = c[48 + t];
      tiles[t].colsb = colsb;
      Require(tiles[t].rows <= kMaxRows && tiles[t].colsb <= kMaxColsb, "tile within 16 rows of 64 bytes");
    }
  }
  static void Release() {
    for (Tile& t : tiles) t = Tile{};
  }
  template <int T>
  static void Zero() {
    std::memset(tiles[T].bytes, 0, sizeof tiles[T].bytes);
  }
  template <int T>
  static void Load(const void* base, int64_t stride) {
    const Tile& t = Configured(T);
    for (int r = 0; r < t.rows; ++r) std::memcpy(tiles[T].bytes[r], static_cast<const uint8_t*>(base) + r * stride, t.colsb);
  }
  template <int T>
  static void Store(void* base, int64_t stride) {
    const Tile& t = Configured(T);
    for (int r = 0; r < t.rows; ++r) std::memcpy(static_cast<uint8_t*>(base) + r * stride, tiles[T].bytes[r], t.colsb);
  }
  template <int D, int A, int B>
  static void DotBf16() {
    Tile &dst = tiles[D], &a = tiles[A], &b = tiles[B];
    Configured(D);
    Configured(A);
    Configured(B);
    Require(a.rows == dst.rows && a.colsb == 4 * b.rows && b.colsb == dst.colsb, "TDPBF16PS tile shapes");
    for (int m = 0; m < dst.rows; ++m) {
      for (int k = 0; k < a.colsb / 4; ++k) {
        for (int n = 0; n < dst.colsb / 4; ++n) {
          float sum = Fp32(dst.bytes[m], n);
          for (int i = 0; i < 2; ++i) {
            sum = FlushDenormal(std::fma(Bf16(a.bytes[m], 2 * k + i), Bf16(b.bytes[k], 2 * n + i), sum));
          }
          std::memcpy(dst.bytes[m] + 4 * n, &sum, sizeof sum);
        }
      }
    }
  }

 private:
  static void Require(bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "AMX tile model: %s does not hold\n", what);
      std::abort();
    }
  }
  static const Tile& Configured(int t) {
    Require(tiles[t].rows > 0 && tiles[t].colsb > 0, "a configured tile");
    return tiles[t];
  }
  static float Fp32(const uint8_t* row, int n) {
    float v;
    std::memcpy(&v, row + 4 * n, sizeof v);
    return v;
  }
  static float Bf16(const uint8_t* row, int i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, sizeof h);
    const uint32_t bits = (h & 0x7F80u) == 0 ? uint32_t(h & 0x8000u) << 16 : uint32_t(h) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  static float FlushDenormal(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
};

}  // namespace kimi::kernels::avx2
