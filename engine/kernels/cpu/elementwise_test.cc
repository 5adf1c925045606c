// Element-wise and row-wise ops: optimised vs reference on lengths that leave every tail
// (1, 7, 8, 9, 100, 1027) and input ranges that reach the saturated regions of exp/tanh.
// Tolerances are relative (the vector exp/tanh are accurate to ~1e-6 relative, see
// vec_math_avx2.h) with a tiny absolute floor for results near zero.
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

const int64_t kLengths[] = {1, 7, 8, 9, 100, 1027};

TEST(ElementwiseTest, ReferenceKnownValues) {
  float x[3] = {0.0f, 3.0f, 4.0f}, out[3];
  ref::Sigmoid(x, 1, out);
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  ref::MulSigmoid(x + 2, x, 1, out);  // 4·σ(0)
  EXPECT_FLOAT_EQ(out[0], 2.0f);
  ref::Silu(x + 1, 1, out);
  EXPECT_FLOAT_EQ(out[0], 3.0f / (1.0f + std::exp(-3.0f)));
  const float w[2] = {1.0f, 2.0f};
  ref::RmsNorm(x + 1, w, 1, 2, 0.0f, out);  // rms of (3,4) = sqrt(12.5)
  EXPECT_NEAR(out[0], 3.0f / std::sqrt(12.5f), 1e-6);
  EXPECT_NEAR(out[1], 8.0f / std::sqrt(12.5f), 1e-6);
  ref::L2Normalize(x + 1, 1, 2, 0.0f, 2.0f, out);
  EXPECT_NEAR(out[0], 1.2f, 1e-6);
  EXPECT_NEAR(out[1], 1.6f, 1e-6);
  const float g = 2.0f, u = 10.0f;
  ref::Situ(&g, &u, 1, 4.0f, 25.0f, out);
  EXPECT_NEAR(out[0], 4 * std::tanh(0.5) / (1 + std::exp(-2.0)) * 25 * std::tanh(0.4), 1e-5);
  float logits[3] = {1.0f, 2.0f, 3.0f};
  ref::Softmax(logits, 1, 3, out);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(out[2], std::exp(3.0) / z, 1e-6);
}

TEST(ElementwiseTest, UnaryOpsMatchReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (int64_t n : kLengths) {
      auto x = RandomFloats(n, 11 + n, -30.0f, 30.0f);
      std::vector<float> want(n), got(n);
      ref::Sigmoid(x.data(), n, want.data());
      t->sigmoid(x.data(), n, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-30f, 2e-6f)) << "sigmoid n=" << n;
      ref::Silu(x.data(), n, want.data());
      t->silu(x.data(), n, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-30f, 2e-6f)) << "silu n=" << n;
      auto y = RandomFloats(n, 31 + n, -3.0f, 3.0f);
      ref::MulSigmoid(y.data(), x.data(), n, want.data());
      t->mul_sigmoid(y.data(), x.data(), n, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-30f, 2e-6f)) << "mul_sigmoid n=" << n;
    }
  }
}

TEST(ElementwiseTest, SituMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (int64_t n : kLengths) {
      for (float range : {0.5f, 5.0f, 100.0f}) {
        auto g = RandomFloats(n, 12 + n, -range, range);
        auto u = RandomFloats(n, 13 + n, -range, range);
        std::vector<float> want(n), got(n);
        ref::Situ(g.data(), u.data(), n, 4.0f, 25.0f, want.data());
        t->situ(g.data(), u.data(), n, 4.0f, 25.0f, got.data());
        EXPECT_TRUE(AllClose(got, want, 1e-12f, 3e-6f)) << "n=" << n << " range=" << range;
      }
    }
  }
}

TEST(ElementwiseTest, RowOpsMatchReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (int64_t dim : kLengths) {
      const int64_t rows = 3;
      auto x = RandomFloats(rows * dim, 14 + dim, -8.0f, 8.0f);
      auto w = RandomFloats(dim, 15 + dim, 0.5f, 1.5f);
      std::vector<float> want(rows * dim), got(rows * dim);
      ref::RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, want.data());
      t->rms_norm(x.data(), w.data(), rows, dim, 1e-5f, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-7f, 2e-6f)) << "rmsnorm dim=" << dim;
      ref::L2Normalize(x.data(), rows, dim, 1e-6f, 0.25f, want.data());
      t->l2_normalize(x.data(), rows, dim, 1e-6f, 0.25f, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-8f, 2e-6f)) << "l2 dim=" << dim;
      ref::Softmax(x.data(), rows, dim, want.data());
      t->softmax(x.data(), rows, dim, got.data());
      EXPECT_TRUE(AllClose(got, want, 1e-12f, 3e-6f)) << "softmax dim=" << dim;
    }
  }
}

TEST(ElementwiseTest, KdaGateMatchesReferenceAndStaysInBounds) {
  const int64_t T = 5, H = 3, dk = 20;
  auto f = RandomFloats(T * H * dk, 16, -6.0f, 6.0f);
  auto A_log = RandomFloats(H, 17, -1.0f, 1.0f);
  auto bias = RandomFloats(H * dk, 18, -1.0f, 1.0f);
  std::vector<float> want(T * H * dk), got(T * H * dk);
  ref::KdaGate(f.data(), A_log.data(), bias.data(), T, H, dk, -5.0f, want.data());
  for (float g : want) {
    EXPECT_LT(g, 0.0f);
    EXPECT_GT(g, -5.0f);
  }
  for (const KernelTable* t : testing::OptimisedTables()) {
    t->kda_gate(f.data(), A_log.data(), bias.data(), T, H, dk, -5.0f, got.data());
    EXPECT_TRUE(AllClose(got, want, 1e-7f, 2e-6f));
  }
}

TEST(ElementwiseTest, ThreadedEntryPointsAllowInPlace) {
  ThreadPool pool(2);
  // Small inputs run on the calling thread, large ones are split: test both sides.
  for (int64_t n : {1000, 40000}) {
    auto x = RandomFloats(n, 19, -5.0f, 5.0f);
    std::vector<float> want(n);
    ref::Silu(x.data(), n, want.data());
    Silu(x.data(), n, x.data(), &pool);
    EXPECT_TRUE(AllClose(x, want, 1e-30f, 2e-6f)) << "n=" << n;
  }
  for (int64_t r : {10, 300}) {
    auto rows = RandomFloats(r * 64, 20);
    std::vector<float> w(64, 1.0f), rwant(r * 64);
    ref::RmsNorm(rows.data(), w.data(), r, 64, 1e-6f, rwant.data());
    RmsNorm(rows.data(), w.data(), r, 64, 1e-6f, rows.data(), &pool);
    EXPECT_TRUE(AllClose(rows, rwant, 1e-7f, 2e-6f)) << "rows=" << r;
  }
}

}  // namespace
}  // namespace kimi::kernels
