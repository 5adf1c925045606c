// The fp32 product (GemmF32Fn, kernel_table.h) that the chunked KDA runs on: the reference on
// a product worked by hand, and every optimised table, in each register width the CPU has,
// against the reference over shapes with every tile tail (M around 6 and 12, N around 16 and
// 32, K from 0), A read row-major and transposed, C overwritten (NaN in it ignored),
// accumulated with alpha = −1 and with rows scaled first (a row scaled by 0 ignored), and nothing
// written outside C's columns.
// Tolerance 1e-5 absolute + 1e-5 relative: fp32 sums of up to 130 products of values in
// [−1, 1] against the reference's double sums; a wrong stride or a lost tail gives errors of
// order 0.1–1.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

TEST(GemmF32Test, ReferenceComputesAProductByHand) {
  // A = [[1, 2], [3, 4]] stored transposed; B = [[5, 6], [7, 8]]; C = 10·ones.
  const std::vector<float> at = {1, 3, 2, 4}, b = {5, 6, 7, 8};
  std::vector<float> c = {10, 10, 10, 10};
  ref::GemmF32(at.data(), 1, 2, b.data(), 2, 2, 2, 2, -1.0f, 1.0f, nullptr, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{10 - 19, 10 - 22, 10 - 43, 10 - 50}));
  c.assign(4, std::numeric_limits<float>::quiet_NaN());
  ref::GemmF32(at.data(), 1, 2, b.data(), 2, 2, 2, 2, 2.0f, 0.0f, nullptr, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{38, 44, 86, 100}));
  // Row scales: row 0 keeps half its old contents, row 1 none (its NaN ignored).
  const std::vector<float> row_scale = {0.5f, 0.0f};
  c = {10, 10, std::numeric_limits<float>::quiet_NaN(), 10};
  ref::GemmF32(at.data(), 1, 2, b.data(), 2, 2, 2, 2, 1.0f, 1.0f, row_scale.data(), c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{5 + 19, 5 + 22, 43, 50}));
}

TEST(GemmF32Test, OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  testing::ForEachGemmWidth([&](int bits) {
    for (const KernelTable* table : testing::OptimisedTables()) {
      for (int64_t K : {0, 1, 7, 64, 130}) {
        for (int64_t N : {1, 15, 16, 17, 32, 33, 128}) {
          for (int64_t M : {1, 5, 6, 7, 12, 13, 25}) {
            for (bool transposed : {false, true}) {
              const int64_t lda = (transposed ? M : K) + 3, ldb = N + 5, ldc = N + 2;
              const auto a = RandomFloats((transposed ? K : M) * lda + 1, 40 + M + K);
              const auto b = RandomFloats(K * ldb + 1, 41 + N + K);
              const int64_t a_row = transposed ? 1 : lda, a_col = transposed ? lda : 1;
              const auto c0 = RandomFloats(M * ldc, 42 + M + N);
              // Row scales in (0, 1], every fourth row's 0 (its old contents, NaN, ignored).
              auto row_scale = RandomFloats(M, 43 + M, 0.01f, 1.0f);
              for (int64_t m = 0; m < M; m += 4) row_scale[m] = 0.0f;
              for (int form = 0; form < 3; ++form) {
                const float beta = form == 0 ? 0.0f : 1.0f;
                const float* scales = form == 2 ? row_scale.data() : nullptr;
                std::vector<float> want = c0, got = c0;
                for (int64_t m = 0; m < M; ++m) {
                  if (beta == 0.0f || (scales != nullptr && scales[m] == 0.0f)) got[m * ldc] = nan;  // must be ignored
                }
                const float alpha = beta == 0.0f ? 0.5f : -1.0f;
                ref::GemmF32(a.data(), a_row, a_col, b.data(), ldb, M, N, K, alpha, beta, scales, want.data(), ldc);
                table->gemm_f32(a.data(), a_row, a_col, b.data(), ldb, M, N, K, alpha, beta, scales, got.data(), ldc);
                EXPECT_TRUE(AllClose(got, want, 1e-5f, 1e-5f))
                    << table->isa << " " << bits << "-bit M=" << M << " N=" << N << " K=" << K
                    << " transposed=" << transposed << " beta=" << beta << " row scales=" << (scales != nullptr);
                for (int64_t m = 0; m < M; ++m)
                  for (int64_t n = N; n < ldc; ++n) ASSERT_EQ(got[m * ldc + n], c0[m * ldc + n]) << "wrote past N";
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace kimi::kernels
