// KDA: the chunked form and the optimised kernels against the token-by-token reference on
// sequences of 1, 17, 31, 32, 33, 40, 63, 64, 65, 100 and 200 tokens (around the chunk length of
// 32, its multiples and its sub-blocks of 16) with a nonzero initial state, unit-norm q/k, β in (0, 1) and gates
// from K3's gate function (lower bound −5) as well as gentle gates near 0; then strong decay:
// every gate in [−5, −4.5] (a chunk's cumulative gate reaches −160, a sub-block spans up to
// 75, still taken as a product) and in [−20, −15] (sub-blocks past the factored range of 80,
// computed in the difference form), and sub-blocks alternating between the two forms.
// Tolerance 2e-5 absolute + 2e-5 relative (observed differences stay below 2e-6): the forms
// sum the same terms in different orders in fp32 over up to 200 steps; outputs and states are
// of order 0.01–1, and a wrong decay, a doubled β or an off-by-one in the chunk gives errors
// of order 1e-3–1 (a β² slip in the UT solve was caught at 2e-4).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

struct KdaCase {
  int64_t T, H, dk, dv;
  std::vector<float> q, k, v, g, beta, state0;

  // Gates from K3's gate function with this lower bound; or, with `strong`, every gate drawn
  // uniformly from [gate_lower_bound, 0.9·gate_lower_bound].
  KdaCase(int64_t T_, int64_t H_, int64_t dk_, int64_t dv_, uint32_t seed, float gate_lower_bound,
          bool strong = false)
      : T(T_), H(H_), dk(dk_), dv(dv_) {
    q = RandomFloats(T * H * dk, seed);
    k = RandomFloats(T * H * dk, seed + 1);
    ref::L2Normalize(q.data(), T * H, dk, 1e-6f, 1.0f, q.data());
    ref::L2Normalize(k.data(), T * H, dk, 1e-6f, 1.0f, k.data());
    v = RandomFloats(T * H * dv, seed + 2);
    auto f = RandomFloats(T * H * dk, seed + 3, -4.0f, 4.0f);
    auto A_log = RandomFloats(H, seed + 4, -1.0f, 1.0f);
    auto bias = RandomFloats(H * dk, seed + 5);
    g.resize(T * H * dk);
    ref::KdaGate(f.data(), A_log.data(), bias.data(), T, H, dk, gate_lower_bound, g.data());
    if (strong) g = RandomFloats(T * H * dk, seed + 8, gate_lower_bound, 0.9f * gate_lower_bound);
    auto b = RandomFloats(T * H, seed + 6, -3.0f, 3.0f);
    beta.resize(T * H);
    ref::Sigmoid(b.data(), T * H, beta.data());
    state0 = RandomFloats(H * dk * dv, seed + 7, -0.5f, 0.5f);
  }

  // Runs fn on tokens [t0, t1) starting from `state`; writes outputs into out.
  template <typename Fn>
  void Run(Fn fn, int64_t t0, int64_t t1, std::vector<float>* state, std::vector<float>* out) const {
    KdaArgs a{};
    a.q = q.data() + t0 * H * dk;
    a.k = k.data() + t0 * H * dk;
    a.v = v.data() + t0 * H * dv;
    a.g = g.data() + t0 * H * dk;
    a.beta = beta.data() + t0 * H;
    a.T = t1 - t0;
    a.H = H;
    a.dk = dk;
    a.dv = dv;
    a.ld_qk = H * dk;
    a.ld_v = H * dv;
    a.ld_beta = H;
    a.scale = 1.0f / std::sqrt(float(dk));
    a.state = state->data();
    a.out = out->data() + t0 * H * dv;
    a.ld_out = H * dv;
    fn(a);
  }
};

TEST(KdaTest, ReferenceRecurrenceOneStepByHand) {
  // dk = dv = 1: S' = e^g·s + β·k·(v − k·e^g·s); o = scale·q·S'.
  const float q = 0.6f, k = 0.8f, v = 2.0f, g = -0.5f, beta = 0.3f, scale = 0.5f;
  std::vector<float> state = {1.5f}, out(1);
  KdaArgs a{&q, &k, &v, &g, &beta, 1, 1, 1, 1, 1, 1, 1, scale, state.data(), out.data(), 1};
  ref::KdaRecurrent(a);
  const float decayed = std::exp(g) * 1.5f;
  const float expected_state = decayed + beta * k * (v - k * decayed);
  EXPECT_NEAR(state[0], expected_state, 1e-6);
  EXPECT_NEAR(out[0], scale * q * expected_state, 1e-6);
}

// Every table's chunked kernel on case c against the recurrence.
void ExpectChunkedEqualsRecurrent(const KdaCase& c, const std::string& what) {
  std::vector<float> s_rec = c.state0, o_rec(c.T * c.H * c.dv);
  c.Run(ref::KdaRecurrent, 0, c.T, &s_rec, &o_rec);
  auto expect = [&](const KernelTable* t, const std::string& form) {
    std::vector<float> s = c.state0, o(c.T * c.H * c.dv);
    c.Run(t->kda_chunked, 0, c.T, &s, &o);
    EXPECT_TRUE(AllClose(o, o_rec, 2e-5f, 2e-5f)) << form << " chunked out T=" << c.T << " H=" << c.H << " " << what;
    EXPECT_TRUE(AllClose(s, s_rec, 2e-5f, 2e-5f)) << form << " chunked state T=" << c.T << " H=" << c.H << " " << what;
  };
  expect(&ReferenceKernels(), "scalar");
  // The optimised tables in every register width their products (gemm_f32) can take here.
  testing::ForEachGemmWidth([&](int bits) {
    for (const KernelTable* t : testing::OptimisedTables()) expect(t, std::string(t->isa) + " " + std::to_string(bits) + "-bit");
  });
}

TEST(KdaTest, ChunkedEqualsRecurrent) {
  for (float lb : {-5.0f, -0.05f}) {
    for (int64_t T : {1, 17, 31, 32, 33, 40, 63, 64, 65, 100, 200}) {
      ExpectChunkedEqualsRecurrent(KdaCase(T, 2, 32, 24, 100 + T, lb), "lb=" + std::to_string(lb));
    }
  }
}

// Head sizes that are no multiple of the vector length: the ragged edges of the decayed rows
// and of the 8 × 8 transposes of each sub-block.
TEST(KdaTest, ChunkedEqualsRecurrentAtRaggedHeadSizes) {
  for (int64_t T : {5, 27, 70}) {
    ExpectChunkedEqualsRecurrent(KdaCase(T, 2, 20, 12, 700 + T, -5.0f), "dk=20 dv=12");
    ExpectChunkedEqualsRecurrent(KdaCase(T, 1, 13, 9, 800 + T, -5.0f), "dk=13 dv=9");
  }
}

TEST(KdaTest, ChunkedEqualsRecurrentUnderStrongDecay) {
  for (float lb : {-5.0f, -20.0f}) {
    for (int64_t T : {40, 64, 130}) {
      ExpectChunkedEqualsRecurrent(KdaCase(T, 3, 32, 40, 500 + T, lb, /*strong=*/true),
                                   "strong gates from " + std::to_string(lb));
    }
  }
}

// Sub-blocks of 16 tokens alternately within the factored range (K3's gates) and past it
// (gates in [−20, −15]), starting either way: each block takes its own form, and the later
// blocks rescale the earlier ones' keys whichever form those took.
TEST(KdaTest, ChunkedEqualsRecurrentWhenSubBlocksAlternateForms) {
  for (int64_t strong_parity : {0, 1}) {
    for (int64_t T : {32, 48, 100}) {
      KdaCase c(T, 2, 32, 24, 600 + T, -5.0f);
      const auto strong = RandomFloats(T * c.H * c.dk, 650 + T, -20.0f, -15.0f);
      for (int64_t t = 0; t < T; ++t) {
        if ((t / kKdaSub) % 2 != strong_parity) continue;
        std::copy_n(strong.begin() + t * c.H * c.dk, c.H * c.dk, c.g.begin() + t * c.H * c.dk);
      }
      ExpectChunkedEqualsRecurrent(c, "strong gates in sub-blocks of parity " + std::to_string(strong_parity));
    }
  }
}

// The AVX2 table's chunked kernel with its element-wise steps in 256-bit and in 512-bit
// registers: the same bits, on vector-length multiples, ragged heads, strong decay (the
// difference form) and several chunks; the 256-bit form against the recurrence as well (the
// table's own test above runs only the form this CPU takes).
TEST(KdaTest, TheChunkedFormsGiveTheSameBits) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  const KdaCase cases[] = {KdaCase(130, 2, 128, 128, 900, -5.0f), KdaCase(70, 2, 20, 12, 901, -5.0f),
                           KdaCase(45, 1, 13, 9, 902, -5.0f), KdaCase(64, 3, 32, 40, 903, -20.0f, /*strong=*/true),
                           KdaCase(33, 2, 24, 36, 904, -0.05f)};
  for (const KdaCase& c : cases) {
    const std::string shape = "T=" + std::to_string(c.T) + " dk=" + std::to_string(c.dk) + " dv=" + std::to_string(c.dv);
    std::vector<float> s_rec = c.state0, o_rec(c.T * c.H * c.dv);
    c.Run(ref::KdaRecurrent, 0, c.T, &s_rec, &o_rec);
    std::vector<float> s256 = c.state0, o256(c.T * c.H * c.dv);
    c.Run(avx2::KdaChunkedForm256, 0, c.T, &s256, &o256);
    EXPECT_TRUE(AllClose(o256, o_rec, 2e-5f, 2e-5f)) << "256-bit out " << shape;
    EXPECT_TRUE(AllClose(s256, s_rec, 2e-5f, 2e-5f)) << "256-bit state " << shape;
    if (!cpu::HasAvx512F()) continue;
    std::vector<float> s512 = c.state0, o512(c.T * c.H * c.dv);
    c.Run(avx2::KdaChunkedForm512, 0, c.T, &s512, &o512);
    EXPECT_EQ(std::memcmp(o512.data(), o256.data(), o256.size() * sizeof(float)), 0) << "outputs " << shape;
    EXPECT_EQ(std::memcmp(s512.data(), s256.data(), s256.size() * sizeof(float)), 0) << "states " << shape;
  }
  if (!cpu::HasAvx512F()) GTEST_SKIP() << "the 512-bit form needs AVX-512F, which this CPU lacks (256-bit tested)";
}

TEST(KdaTest, OptimisedRecurrentMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  // dv = 128 takes the 32-column blocks, 44 = 32 + 8 + 4 every path, 5 only the scalar one.
  for (int64_t dv : {128, 44, 5}) {
    for (int64_t T : {1, 65}) {
      KdaCase c(T, 2, 40, dv, 200 + T, -5.0f);
      std::vector<float> s_want = c.state0, o_want(T * c.H * dv);
      c.Run(ref::KdaRecurrent, 0, T, &s_want, &o_want);
      for (const KernelTable* t : testing::OptimisedTables()) {
        std::vector<float> s = c.state0, o(T * c.H * dv);
        c.Run(t->kda_recurrent, 0, T, &s, &o);
        EXPECT_TRUE(AllClose(o, o_want, 1e-5f, 1e-5f)) << t->isa << " dv=" << dv << " T=" << T;
        EXPECT_TRUE(AllClose(s, s_want, 1e-5f, 1e-5f)) << t->isa << " dv=" << dv << " T=" << T;
      }
    }
  }
}

TEST(KdaTest, K3HeadSizeChunkedPrefillThenDecodeEqualsRecurrence) {
  ThreadPool pool(2);
  const int64_t T = 130, prefix = 70;
  KdaCase c(T, 3, 128, 128, 300, -5.0f);
  std::vector<float> s_rec = c.state0, o_rec(T * c.H * c.dv);
  c.Run(ref::KdaRecurrent, 0, T, &s_rec, &o_rec);
  std::vector<float> s = c.state0, o(T * c.H * c.dv);
  c.Run([&](const KdaArgs& a) { KdaChunked(a, &pool); }, 0, prefix, &s, &o);
  for (int64_t t = prefix; t < T; ++t) c.Run([&](const KdaArgs& a) { KdaRecurrent(a, &pool); }, t, t + 1, &s, &o);
  EXPECT_TRUE(AllClose(o, o_rec, 2e-5f, 2e-5f));
  EXPECT_TRUE(AllClose(s, s_rec, 2e-5f, 2e-5f));
}

}  // namespace
}  // namespace kimi::kernels
