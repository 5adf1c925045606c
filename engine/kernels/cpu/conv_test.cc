// Causal conv + SiLU: optimised vs reference over channel counts with tails, widths 2–5 and
// sequence lengths shorter and longer than the state; prefill in pieces equals one prefill
// (the state carries exactly the last width−1 inputs), and decode is prefill with T = 1.
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

TEST(ConvTest, ReferenceKnownValues) {
  // One channel, width 3, weights (1, 2, 3), state (10, 20): out0 = silu(10 + 40 + 3·x0).
  const float w[3] = {1, 2, 3}, x[2] = {1, -1};
  float state[2] = {10, 20}, out[2];
  ref::CausalConv1dSilu(x, 1, 2, 1, w, nullptr, 3, state, 1, out, 1);
  auto silu = [](float v) { return v / (1 + std::exp(-v)); };
  EXPECT_NEAR(out[0], silu(10 + 40 + 3), 1e-4);
  EXPECT_NEAR(out[1], silu(20 + 2 - 3), 1e-5);
  EXPECT_EQ(state[0], 1);
  EXPECT_EQ(state[1], -1);
}

TEST(ConvTest, OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (int width : {2, 4, 5}) {
      for (int64_t C : {1, 7, 8, 19, 64}) {
        for (int64_t T : {1, 2, 3, 10}) {
          const int64_t ldx = C + 2, ldo = C + 1;
          auto x = RandomFloats(T * ldx, 21 + C + T);
          auto w = RandomFloats(C * width, 22 + width);
          auto bias = RandomFloats(C, 23);
          auto state0 = RandomFloats((width - 1) * C, 24 + T);
          std::vector<float> s_want = state0, s_got = state0;
          std::vector<float> want(T * ldo, 0.0f), got(T * ldo, 0.0f);
          ref::CausalConv1dSilu(x.data(), ldx, T, C, w.data(), bias.data(), width, s_want.data(), C, want.data(), ldo);
          t->causal_conv1d_silu(x.data(), ldx, T, C, w.data(), bias.data(), width, s_got.data(), C, got.data(), ldo);
          EXPECT_TRUE(AllClose(got, want, 1e-6f, 2e-6f)) << "width=" << width << " C=" << C << " T=" << T;
          EXPECT_TRUE(AllClose(s_got, s_want, 0.0f, 0.0f)) << "state width=" << width << " C=" << C << " T=" << T;
        }
      }
    }
  }
}

// The decode path (one or two tokens at width 4: taps transposed in registers) against the
// prefill path (taps transposed once per call): the same taps and FMAs, so the same bits.
TEST(ConvTest, DecodeTapsEqualPrefillTapsBitForBit) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  const int width = 4;
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (int64_t C : {8, 64, 1536}) {
      const int64_t T = 6;
      auto x = RandomFloats(T * C, 28 + C);
      auto w = RandomFloats(C * width, 29);
      auto bias = RandomFloats(C, 30);
      auto state0 = RandomFloats((width - 1) * C, 31);
      std::vector<float> s_one = state0, out_one(T * C);
      t->causal_conv1d_silu(x.data(), C, T, C, w.data(), bias.data(), width, s_one.data(), C, out_one.data(), C);
      for (int64_t step : {1, 2}) {
        std::vector<float> s_steps = state0, out_steps(T * C);
        for (int64_t t0 = 0; t0 < T; t0 += step) {
          t->causal_conv1d_silu(x.data() + t0 * C, C, step, C, w.data(), bias.data(), width, s_steps.data(), C,
                                out_steps.data() + t0 * C, C);
        }
        EXPECT_TRUE(AllClose(out_steps, out_one, 0.0f, 0.0f)) << t->isa << " C=" << C << " step=" << step;
        EXPECT_TRUE(AllClose(s_steps, s_one, 0.0f, 0.0f)) << t->isa << " C=" << C << " step=" << step;
      }
    }
  }
}

TEST(ConvTest, PiecewisePrefillAndDecodeEqualOnePrefill) {
  ThreadPool pool(2);
  const int width = 4;
  const int64_t C = 1100, T = 9;  // the 9-token prefill is split over the threads, decode is not
  auto x = RandomFloats(T * C, 25);
  auto w = RandomFloats(C * width, 26);
  auto state0 = RandomFloats((width - 1) * C, 27);
  std::vector<float> s_one = state0, out_one(T * C);
  CausalConv1dSilu(x.data(), C, T, C, w.data(), nullptr, width, s_one.data(), out_one.data(), C, &pool);
  std::vector<float> s_pieces = state0, out_pieces(T * C);
  CausalConv1dSilu(x.data(), C, 5, C, w.data(), nullptr, width, s_pieces.data(), out_pieces.data(), C, &pool);
  for (int64_t t = 5; t < T; ++t)  // decode steps
    CausalConv1dSilu(x.data() + t * C, C, 1, C, w.data(), nullptr, width, s_pieces.data(), out_pieces.data() + t * C, C, &pool);
  EXPECT_TRUE(AllClose(out_pieces, out_one, 1e-6f, 1e-6f));
  EXPECT_TRUE(AllClose(s_pieces, s_one, 0.0f, 0.0f));
}

}  // namespace
}  // namespace kimi::kernels
