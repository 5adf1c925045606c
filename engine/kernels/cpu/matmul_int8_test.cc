// Int8-weight products: the optimised GEMV (both register widths) and GEMM against the
// double-accumulating reference (every M tail of the GEMV's 4-row tiles, N tails of its 4- and
// 2-weight-row tiles, K % 16 and K % 32 tails, N past the GEMM's
// 128-wide blocks, K past its 256-wide ones, padded strides), and the threaded entry point
// against the reference on both sides of the GEMV/GEMM choice.
// Tolerance: atol = 1e-5·sqrt(K)·127·scale (fp32 accumulation of K products |x·q| <= 127),
// rtol = 1e-5; a wrong offset, byte order or scale gives errors of order 1.
#include <cmath>

#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/cpu/avx2/avx2.h"
#include "core/cpu_features.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomBytes;
using testing::RandomFloats;

struct Shape {
  int64_t M, N, K;
};

const Shape kShapes[] = {{1, 1, 4},    {1, 7, 20},    {2, 17, 36},   {3, 16, 64},  {4, 33, 300},
                         {5, 130, 64}, {6, 9, 520},   {7, 40, 260},  {9, 17, 32},  {13, 130, 300},
                         {16, 5, 4096}, {33, 47, 520}, {1, 37, 2048}, {2, 3, 1040}, {1, 6, 48},
                         {1, 3, 4}, {5, 7, 40}};

constexpr float kScale = 0.01f;

std::vector<float> RowScales(int64_t n, uint32_t seed) {
  auto s = RandomFloats(n, seed, 0.5f * kScale, 1.5f * kScale);
  return s;
}

TEST(MatmulInt8Test, OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    for (const Shape& s : kShapes) {
      const int64_t ldx = s.K + 3, ldy = s.N + 2;
      auto x = RandomFloats(s.M * ldx, 1 + s.M);
      auto w = RandomBytes(s.N * s.K, 2 + s.N, 1, 255);  // q in [-127, 127]
      auto scale = RowScales(s.N, 3 + s.K);
      std::vector<float> want(s.M * ldy, 0.0f), got(s.M * ldy, 0.0f);
      ref::MatmulInt8(x.data(), ldx, w.data(), scale.data(), s.M, s.N, s.K, want.data(), ldy);
      const float atol = 1e-5f * std::sqrt(float(s.K)) * 127 * 1.5f * kScale;
      for (KernelTable::MatmulInt8Fn fn : {table->gemv_int8, table->gemm_int8}) {
        std::fill(got.begin(), got.end(), 0.0f);
        fn(x.data(), ldx, w.data(), scale.data(), s.M, s.N, s.K, got.data(), ldy);
        EXPECT_TRUE(AllClose(got, want, atol, 1e-5f))
            << table->isa << " " << (fn == table->gemv_int8 ? "gemv" : "gemm") << " M=" << s.M << " N=" << s.N
            << " K=" << s.K;
      }
    }
  }
}

// Both register widths of the AVX2 table's GEMV, whichever the table picks on this CPU.
TEST(MatmulInt8Test, BothGemvFormsMatchReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  std::vector<std::pair<KernelTable::MatmulInt8Fn, const char*>> forms = {{avx2::GemvInt8Form256, "256-bit"}};
  if (cpu::HasAvx512F()) forms.push_back({avx2::GemvInt8Form512, "512-bit"});
  for (const Shape& s : kShapes) {
    const int64_t ldx = s.K + 1, ldy = s.N + 3;
    auto x = RandomFloats(s.M * ldx, 4 + s.M);
    auto w = RandomBytes(s.N * s.K, 5 + s.N, 1, 255);
    auto scale = RowScales(s.N, 6 + s.K);
    std::vector<float> want(s.M * ldy, 0.0f), got(s.M * ldy, 0.0f);
    ref::MatmulInt8(x.data(), ldx, w.data(), scale.data(), s.M, s.N, s.K, want.data(), ldy);
    for (const auto& [fn, name] : forms) {
      std::fill(got.begin(), got.end(), 0.0f);
      fn(x.data(), ldx, w.data(), scale.data(), s.M, s.N, s.K, got.data(), ldy);
      EXPECT_TRUE(AllClose(got, want, 1e-5f * std::sqrt(float(s.K)) * 127 * 1.5f * kScale, 1e-5f))
          << name << " M=" << s.M << " N=" << s.N << " K=" << s.K;
    }
  }
  if (!cpu::HasAvx512F()) GTEST_SKIP() << "the 512-bit form needs AVX-512F, which this CPU lacks (256-bit tested)";
}

// The byte layout: 0x80 is zero, 0x81 one step, 0x01 minus 127 steps; the scale is per row.
TEST(MatmulInt8Test, ReferenceReadsOffsetBytesAndRowScales) {
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const uint8_t w[8] = {0x80, 0x81, 0x01, 0x80, 0x82, 0x80, 0x80, 0xff};
  const float scale[2] = {0.5f, 2.0f};
  float y[2];
  ref::MatmulInt8(x, 4, w, scale, 1, 2, 4, y, 2);
  EXPECT_FLOAT_EQ(y[0], 0.5f * (2.0f * 1 + 3.0f * -127));
  EXPECT_FLOAT_EQ(y[1], 2.0f * (1.0f * 2 + 4.0f * 127));
}

TEST(MatmulInt8Test, ThreadedEntryPointMatchesReference) {
  ThreadPool pool(2);
  for (const Shape& s : {Shape{1, 300, 256}, Shape{3, 200, 128}, Shape{24, 150, 96}, Shape{70, 64, 512}}) {
    auto x = RandomFloats(s.M * s.K, 7 + s.M);
    auto w = RandomBytes(s.N * s.K, 8 + s.N, 1, 255);
    auto scale = RowScales(s.N, 9);
    std::vector<float> want(s.M * s.N), got(s.M * s.N);
    ref::MatmulInt8(x.data(), s.K, w.data(), scale.data(), s.M, s.N, s.K, want.data(), s.N);
    MatmulInt8(x.data(), s.K, w.data(), scale.data(), s.M, s.N, s.K, got.data(), s.N, &pool);
    EXPECT_TRUE(AllClose(got, want, 1e-5f * std::sqrt(float(s.K)) * 127 * 1.5f * kScale, 1e-5f))
        << "M=" << s.M << " N=" << s.N << " K=" << s.K;
  }
}

}  // namespace
}  // namespace kimi::kernels
