// The blocked prefill GEMM in 512-bit registers against its 256-bit form: the same bits for
// both storage formats over shapes with every tail (M not a multiple of 6 or 12, N not a
// multiple of 16 or 32 and past the 128-wide blocks, K past the 256-wide blocks), padded
// strides, and nothing written outside the output rows. (matmul_test.cc compares the form the
// CPU takes with the scalar reference.)
#include <algorithm>
#include <vector>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_width_avx2.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"

namespace kimi::kernels {
namespace {

#if defined(__x86_64__)
using testing::RandomBf16;
using testing::RandomBytes;
using testing::RandomFloats;

// Runs `product` into a fresh output (padding filled with a sentinel) at each register width
// and expects the two equal, the padding untouched; restores the width it found.
template <class Product>
void ExpectWidthsAgree(int64_t M, int64_t N, int64_t ldy, Product product, const char* what, int64_t K) {
  const int before = avx2::GemmRegisterWidth();
  std::vector<float> out[2];
  for (int i = 0; i < 2; ++i) {
    avx2::SetGemmRegisterWidth(i == 0 ? 256 : 512);
    ASSERT_EQ(avx2::GemmRegisterWidth(), i == 0 ? 256 : 512);
    out[i].assign(M * ldy, 7.0f);
    product(out[i].data());
  }
  avx2::SetGemmRegisterWidth(before);
  EXPECT_TRUE(std::equal(out[0].begin(), out[0].end(), out[1].begin()))
      << what << " M=" << M << " N=" << N << " K=" << K;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = N; n < ldy; ++n) EXPECT_EQ(out[1][m * ldy + n], 7.0f) << what << " M=" << M << " N=" << N;
}

TEST(GemmWidthTest, Bf16256And512BitFormsGiveTheSameBits) {
  if (Avx2Kernels() == nullptr || !cpu::HasAvx512F()) GTEST_SKIP() << "no AVX-512F on this CPU";
  for (int64_t K : {1, 7, 256, 257, 600}) {
    for (int64_t N : {1, 15, 16, 17, 33, 48, 130, 161}) {
      const int64_t ldx = K + 3, ldy = N + 2;
      auto w = RandomBf16(N * K, 20 + N + K);
      for (int64_t M : {1, 5, 6, 11, 12, 13, 25, 40}) {
        auto x = RandomFloats(M * ldx, 21 + M);
        ExpectWidthsAgree(
            M, N, ldy, [&](float* y) { avx2::GemmBf16(x.data(), ldx, w.data(), M, N, K, y, ldy); }, "bf16", K);
      }
    }
  }
}

TEST(GemmWidthTest, Mxfp4256And512BitFormsGiveTheSameBits) {
  if (Avx2Kernels() == nullptr || !cpu::HasAvx512F()) GTEST_SKIP() << "no AVX-512F on this CPU";
  for (int64_t K : {32, 256, 288, 544}) {
    for (int64_t N : {3, 16, 31, 47, 130}) {
      const int64_t ldx = K + 5, ldy = N + 1;
      auto packed = RandomBytes(N * K / 2, 30 + N);
      auto scales = RandomBytes(N * K / 32, 31 + K, 120, 130);
      for (int64_t M : {2, 12, 19, 37}) {
        auto x = RandomFloats(M * ldx, 32 + M);
        ExpectWidthsAgree(
            M, N, ldy,
            [&](float* y) { avx2::GemmMxfp4(x.data(), ldx, packed.data(), scales.data(), M, N, K, y, ldy); },
            "mxfp4", K);
      }
    }
  }
}

// A request for 512 bits on a CPU without AVX-512F leaves the 256-bit form.
TEST(GemmWidthTest, WidthFollowsTheCpu) {
  const int before = avx2::GemmRegisterWidth();
  avx2::SetGemmRegisterWidth(512);
  EXPECT_EQ(avx2::GemmRegisterWidth(), cpu::HasAvx512F() ? 512 : 256);
  avx2::SetGemmRegisterWidth(256);
  EXPECT_EQ(avx2::GemmRegisterWidth(), 256);
  avx2::SetGemmRegisterWidth(before);
}
#endif

}  // namespace
}  // namespace kimi::kernels
