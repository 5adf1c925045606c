// Top-k routing: optimised vs reference (ids exactly, weights to 1e-6 relative) on random
// logits with and without bias, renormalised or not, including heavy ties; and hand-made
// cases pinning the semantics (bias only chooses, weights are the unbiased scores, ties go
// to the lower index).
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

float Sig(float x) { return 1.0f / (1.0f + std::exp(-x)); }

TEST(RoutingTest, BiasChoosesButWeightsAreUnbiasedScores) {
  const float logits[4] = {2.0f, 0.0f, 1.0f, -1.0f};
  const float bias[4] = {0.0f, 0.0f, 0.0f, 5.0f};
  int32_t ids[2];
  float w[2];
  for (const KernelTable* t : {&ReferenceKernels(), Avx2Kernels()}) {
    if (t == nullptr) continue;
    t->topk_route(logits, bias, 4, 2, false, 2.5f, ids, w);
    EXPECT_EQ(ids[0], 3);
    EXPECT_EQ(ids[1], 0);
    EXPECT_NEAR(w[0], Sig(-1.0f) * 2.5f, 1e-6);
    EXPECT_NEAR(w[1], Sig(2.0f) * 2.5f, 1e-6);
    t->topk_route(logits, bias, 4, 2, true, 1.0f, ids, w);
    EXPECT_NEAR(w[0] + w[1], 1.0f, 1e-6);
  }
}

TEST(RoutingTest, TiesGoToTheLowerIndex) {
  const float logits[6] = {0.5f, 1.0f, 1.0f, 0.5f, 1.0f, 0.5f};
  int32_t ids[4];
  float w[4];
  for (const KernelTable* t : {&ReferenceKernels(), Avx2Kernels()}) {
    if (t == nullptr) continue;
    t->topk_route(logits, nullptr, 6, 4, false, 1.0f, ids, w);
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(ids[1], 2);
    EXPECT_EQ(ids[2], 4);
    EXPECT_EQ(ids[3], 0);
  }
}

TEST(RoutingTest, OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  ThreadPool pool(2);
  for (int64_t E : {8, 64, 896}) {
    for (int k : {1, 2, 8}) {
      const int64_t T = 7;
      auto logits = RandomFloats(T * E, 60 + E, -4.0f, 4.0f);
      for (int64_t i = 0; i < T * E; i += 3) logits[i] = std::round(logits[i]);  // many ties
      auto bias = RandomFloats(E, 61, -0.1f, 0.1f);
      for (bool renorm : {false, true}) {
        for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias.data())}) {
          std::vector<int32_t> want_ids(T * k), got_ids(T * k);
          std::vector<float> want_w(T * k), got_w(T * k);
          for (int64_t t = 0; t < T; ++t)
            ref::TopKRoute(logits.data() + t * E, b, E, k, renorm, 2.5f, want_ids.data() + t * k, want_w.data() + t * k);
          TopKRoute(logits.data(), b, T, E, k, renorm, 2.5f, got_ids.data(), got_w.data(), &pool);
          EXPECT_EQ(got_ids, want_ids) << "E=" << E << " k=" << k;
          EXPECT_TRUE(AllClose(got_w, want_w, 1e-7f, 2e-6f)) << "E=" << E << " k=" << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
