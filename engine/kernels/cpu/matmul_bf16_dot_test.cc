// The prefill GEMM on BF16 dot products (kernel_table.h: the avx512bf16 and amx tables): the
// reference's definition on known values, each path against the reference over shapes that hit
// every tail (rows not a multiple of 12/32, columns not a multiple of 16/32, odd K, K past the
// 256/512-wide blocks and not a multiple of 32, N past the 128-wide blocks, padded strides),
// and the tables equal to AVX2's except in that GEMM. A path this CPU lacks is skipped, naming
// the missing feature.
// Tolerance against ref::MatmulBf16Dot: the same products summed in another order, so
// atol = 1e-5·sqrt(K), rtol = 1e-5 as for the fp32 GEMMs (matmul_test.cc).
#include <cmath>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/amx_tile_model.h"
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomBf16;
using testing::RandomFloats;

struct Path {
  const char* name;
  const char* missing;  // why the test skips where the CPU lacks it
  const KernelTable* table;
};

Path Avx512Bf16Path() {
  return {"avx512bf16", "this CPU has no AVX512-BF16 (vdpbf16ps)", Avx512Bf16Kernels()};
}
Path AmxPath() {
  return {"amx", "this CPU has no AMX-BF16 (tdpbf16ps), or the OS refused the tile data permission", AmxKernels()};
}

// y = x · w for x of one value repeated and w of ones: the sum of K copies of x as the kernel
// rounds it (exact in fp32 for these K).
std::vector<float> ConstantProduct(MatmulBf16Fn fn, float value, int64_t M, int64_t N, int64_t K) {
  const std::vector<float> x(M * K, value);
  const std::vector<uint16_t> w(N * K, F32ToBf16(1.0f));
  std::vector<float> y(M * N, -1.0f);
  fn(x.data(), K, w.data(), M, N, K, y.data(), N);
  return y;
}

// x, and what hi + lo keeps of it.
struct SplitCase {
  float x, kept;
};
// 1 + 2^-10 is kept whole although BF16 alone rounds it to 1; 1 + 3·2^-8 rounds hi up to
// 1 + 2^-6 (a tie, to even) and lo = −2^-8 brings it back; in 1 + 2^-10 + 2^-18 the lo part
// 2^-10 + 2^-18 is a tie between 2^-10 and 2^-10 + 2^-17 and goes to the even 2^-10; in
// 1 + 2^-10 + 3·2^-19 it rounds up to 2^-10 + 2^-17.
constexpr SplitCase kSplitCases[] = {{1.0f + 0x1p-10f, 1.0f + 0x1p-10f},
                                     {1.0f + 3 * 0x1p-8f, 1.0f + 3 * 0x1p-8f},
                                     {-(1.0f + 3 * 0x1p-8f), -(1.0f + 3 * 0x1p-8f)},
                                     {1.0f + 0x1p-10f + 0x1p-18f, 1.0f + 0x1p-10f},
                                     {1.0f + 0x1p-10f + 3 * 0x1p-19f, 1.0f + 0x1p-10f + 0x1p-17f},
                                     {0.15625f, 0.15625f}};

TEST(Bf16DotTest, ReferenceSplitsActivationsIntoTwoBf16Values) {
  for (const SplitCase& c : kSplitCases) {
    const std::vector<float> y = ConstantProduct(ref::MatmulBf16Dot, c.x, 2, 3, 40);
    for (float v : y) EXPECT_EQ(v, 40 * c.kept) << "x = " << c.x;
  }
}

// Both layouts of the split activations against F32ToBf16 on each value, past K (up to 31 zeros:
// AMX rounds K up to 32) and past M (zero rows).
TEST(Bf16DotTest, SplitActivationsInBothLayouts) {
  if (Avx512Bf16Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  for (const avx2::SplitLayout layout : {avx2::SplitLayout::kPairsInterleaved, avx2::SplitLayout::kHalvesSideBySide}) {
    const bool interleaved = layout == avx2::SplitLayout::kPairsInterleaved;
    for (const int64_t K : {1, 2, 17, 33, 40, 64, 100}) {
      const int64_t M = 3, Mp = 5, ldx = K + 1;
      const int64_t Kp = interleaved ? (K + 1) / 2 * 2 : (K + 31) / 32 * 32, ldxb = 2 * Kp + 32;
      const auto x = RandomFloats(M * ldx, 40 + K);
      std::vector<uint16_t> xb(Mp * ldxb, 0xFFFF);
      avx2::SplitBf16Activations(x.data(), ldx, M, K, Mp, Kp, layout, xb.data(), ldxb);
      for (int64_t m = 0; m < Mp; ++m) {
        for (int64_t k = 0; k < Kp; ++k) {
          const float value = m < M && k < K ? x[m * ldx + k] : 0.0f;
          const uint16_t hi = F32ToBf16(value), lo = F32ToBf16(value - Bf16ToF32(hi));
          const int64_t hi_at = interleaved ? k / 2 * 4 + k % 2 : k, lo_at = interleaved ? hi_at + 2 : Kp + k;
          ASSERT_EQ(xb[m * ldxb + hi_at], hi) << "hi, layout " << interleaved << " K=" << K << " m=" << m << " k=" << k;
          ASSERT_EQ(xb[m * ldxb + lo_at], lo) << "lo, layout " << interleaved << " K=" << K << " m=" << m << " k=" << k;
        }
      }
    }
  }
}

TEST(Bf16DotTest, ReferenceSumsInFp32) {
  // 2^24 + 1 + 1 is 2^24 in fp32 summed left to right (each +1 rounds away), 2^24 + 2 in double.
  const float x[3] = {0x1p24f, 1.0f, 1.0f};
  const uint16_t w[3] = {F32ToBf16(1.0f), F32ToBf16(1.0f), F32ToBf16(1.0f)};
  float y = 0;
  ref::MatmulBf16Dot(x, 3, w, 1, 1, 3, &y, 1);
  EXPECT_EQ(y, 0x1p24f);
}

// fn against the reference; `name` says which GEMM failed.
void ExpectGemmMatchesReference(const char* name, MatmulBf16Fn fn) {
  struct Shape {
    int64_t M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1},      {1, 5, 7},      {2, 17, 9},     {12, 16, 32},   {13, 33, 31},
                          {24, 32, 64},   {31, 47, 257},  {32, 16, 512},  {33, 130, 300}, {65, 40, 520},
                          {70, 129, 1030}, {100, 48, 1024}, {11, 5, 2063}, {40, 20, 7168}};
  for (const Shape& s : shapes) {
    const int64_t ldx = s.K + 3, ldy = s.N + 2;
    const auto x = RandomFloats(s.M * ldx, 11 + s.M);
    const auto w = RandomBf16(s.N * s.K, 12 + s.N);
    std::vector<float> want(s.M * ldy, 0.0f), got(s.M * ldy, 0.0f);
    ref::MatmulBf16Dot(x.data(), ldx, w.data(), s.M, s.N, s.K, want.data(), ldy);
    fn(x.data(), ldx, w.data(), s.M, s.N, s.K, got.data(), ldy);
    EXPECT_TRUE(AllClose(got, want, 1e-5f * std::sqrt(float(s.K)), 1e-5f))
        << name << " M=" << s.M << " N=" << s.N << " K=" << s.K;
  }
  // The split's roundings, ties to even (these sums are exact, so any order gives them).
  for (const SplitCase& c : kSplitCases) {
    const std::vector<float> y = ConstantProduct(fn, c.x, 35, 19, 40);
    EXPECT_EQ(y, std::vector<float>(35 * 19, 40 * c.kept)) << name << " x = " << c.x;
  }
}

void ExpectPathMatchesReference(const Path& path) {
  if (path.table == nullptr) GTEST_SKIP() << path.missing;
  ExpectGemmMatchesReference(path.name, path.table->gemm_bf16);
}

TEST(Bf16DotTest, Avx512Bf16GemmMatchesReference) { ExpectPathMatchesReference(Avx512Bf16Path()); }

TEST(Bf16DotTest, AmxGemmMatchesReference) { ExpectPathMatchesReference(AmxPath()); }

// The AMX GEMM's own code (split, packing, blocks, tiles of 32 × 32, the lo tiles then the hi
// ones, the edges) on amx_tile_model.h's model of the tile instructions, on any CPU with
// AVX512-BF16: what AmxGemmMatchesReference checks of everything but the instructions where the
// CPU has no AMX.
TEST(Bf16DotTest, AmxGemmOnTheTileModelMatchesReference) {
  if (Avx512Bf16Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (the split and the tile sums use it)";
  ExpectGemmMatchesReference("amx on the tile model", avx2::GemmBf16AmxOnTileModel);
}

// The model's TDPBF16PS on known values: pairs in order (a's pair k against the pair of b's row k
// in dst's column n), each product added in turn with one rounding, and denormal inputs as zero.
TEST(Bf16DotTest, TileModelDotProductAsTheInstructionDefinesIt) {
  using avx2::TileModel;
  struct alignas(64) Config {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
  } config;
  // dst and a: 2 rows; a: 2 pairs (8 bytes); b: 2 rows of 3 pairs (12 bytes); dst: 3 columns.
  for (int t : {0, 1, 2}) config.rows[t] = 2;
  config.colsb[0] = 12;
  config.colsb[1] = 8;
  config.colsb[2] = 12;
  TileModel::Configure(&config);
  const auto bf = [](float v) { return F32ToBf16(v); };
  // a row 0 = pairs (1, 2), (3, 2^24); row 1 = (a denormal, 1), (0, 0).
  const uint16_t a[2][4] = {{bf(1), bf(2), bf(3), bf(0x1p24f)}, {0x0001, bf(1), 0, 0}};
  // b row k = pairs for columns 0, 1, 2.
  const uint16_t b[2][6] = {{bf(10), bf(100), bf(0x1p24f), 0, bf(0x1p24f), bf(0.5f)},
                            {bf(1000), bf(1), bf(1), bf(1), bf(0.25f), 0}};
  const float init[2][3] = {{0.5f, 0, 0}, {0, 0, 7}};
  TileModel::Load<0>(init, sizeof init[0]);
  TileModel::Load<1>(a, sizeof a[0]);
  TileModel::Load<2>(b, sizeof b[0]);
  TileModel::DotBf16<0, 1, 2>();
  float got[2][3];
  TileModel::Store<0>(got, sizeof got[0]);
  TileModel::Release();
  // 0.5 + 1·10 + 2·100 + 3·1000 + 2^24·1: the pairs in order (swapped within a pair: 120, not 210).
  EXPECT_EQ(got[0][0], 0x1p24f + 3210.0f);
  // 2^24 + 0 + 3 rounds to 2^24 + 4, then + 2^24.
  EXPECT_EQ(got[0][1], 0x1p25f + 4.0f);
  // Each addition rounded: 2^24 + 2·0.5 ties to the even 2^24, + 3·0.25 rounds back to 2^24
  // (summed exactly, 2^24 + 1.75 would round to 2^24 + 2).
  EXPECT_EQ(got[0][2], 0x1p24f);
  // The denormal counts as zero: column 1 stays 0 (2^-133 · 2^24 = 2^-109 would be normal).
  EXPECT_EQ(got[1][0], 100.0f);
  EXPECT_EQ(got[1][1], 0.0f);
  EXPECT_EQ(got[1][2], 7.5f);
}

// Everything but the prefill GEMM is the AVX2 table's, so the two paths differ in that alone.
void ExpectAvx2ButTheGemm(const Path& path) {
  if (path.table == nullptr) GTEST_SKIP() << path.missing;
  KernelTable expected = *Avx2Kernels();
  expected.isa = path.table->isa;
  expected.gemm_bf16 = path.table->gemm_bf16;
  EXPECT_EQ(std::string(path.table->isa), path.name);
  EXPECT_NE(path.table->gemm_bf16, Avx2Kernels()->gemm_bf16);
  EXPECT_EQ(std::memcmp(&expected, path.table, sizeof expected), 0) << path.name;
}

TEST(Bf16DotTest, Avx512Bf16TableIsAvx2ButTheGemm) { ExpectAvx2ButTheGemm(Avx512Bf16Path()); }

TEST(Bf16DotTest, AmxTableIsAvx2ButTheGemm) { ExpectAvx2ButTheGemm(AmxPath()); }

TEST(Bf16DotTest, TablesByName) {
  EXPECT_EQ(KernelsNamed("scalar"), &ReferenceKernels());
  EXPECT_EQ(KernelsNamed("avx2"), Avx2Kernels());
  EXPECT_EQ(KernelsNamed("avx512bf16"), Avx512Bf16Kernels());
  EXPECT_EQ(KernelsNamed("amx"), AmxKernels());
  EXPECT_EQ(KernelsNamed("avx512"), nullptr);
  EXPECT_EQ(KernelsNamed(""), nullptr);
}

}  // namespace
}  // namespace kimi::kernels
