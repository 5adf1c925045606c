// The dispatch table: every entry of every table is filled, and the active table is the one
// KIMI_KERNELS names where the machine has it, else the default: the reference without AVX2,
// AVX2, or the avx512bf16 table where its prefill GEMM's peak is the better (BetterPrefillGemm).
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cpu/kernel_test_util.h"
#include "core/machine_limits.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kernels.h"

namespace kimi::kernels {
namespace {

void ExpectComplete(const KernelTable& t) {
  SCOPED_TRACE(t.isa);
  EXPECT_NE(t.gemv_bf16, nullptr);
  EXPECT_NE(t.gemm_bf16, nullptr);
  EXPECT_NE(t.gemv_mxfp4, nullptr);
  EXPECT_NE(t.gemm_mxfp4, nullptr);
  EXPECT_NE(t.rms_norm, nullptr);
  EXPECT_NE(t.situ, nullptr);
  EXPECT_NE(t.silu, nullptr);
  EXPECT_NE(t.sigmoid, nullptr);
  EXPECT_NE(t.mul_sigmoid, nullptr);
  EXPECT_NE(t.softmax, nullptr);
  EXPECT_NE(t.l2_normalize, nullptr);
  EXPECT_NE(t.causal_conv1d_silu, nullptr);
  EXPECT_NE(t.kda_recurrent, nullptr);
  EXPECT_NE(t.kda_chunked, nullptr);
  EXPECT_NE(t.kda_gate, nullptr);
  EXPECT_NE(t.mla_absorbed, nullptr);
  EXPECT_NE(t.topk_route, nullptr);
}

TEST(DispatchTest, EveryTableIsComplete) {
  ExpectComplete(ReferenceKernels());
  for (const KernelTable* t : testing::OptimisedTables()) ExpectComplete(*t);
  for (const KernelTable* t : {Avx512Bf16Kernels(), AmxKernels()}) {
    if (t != nullptr) ExpectComplete(*t);
  }
}

TEST(DispatchTest, ActiveTableFollowsTheOverrideElseTheDefault) {
  const char* force = std::getenv("KIMI_KERNELS");
  const KernelTable* forced = force != nullptr ? KernelsNamed(force) : nullptr;
  const KernelTable* expected = forced != nullptr ? forced : &DefaultKernels();
  EXPECT_EQ(&ActiveKernels(), expected);
  EXPECT_EQ(std::string(ActiveIsa()), expected->isa);
}

TEST(DispatchTest, DefaultIsTheFastestPrefillGemmTheCpuHasExceptAmx) {
  const KernelTable& chosen = DefaultKernels();
  if (Avx2Kernels() == nullptr) {
    EXPECT_EQ(&chosen, &ReferenceKernels());
    return;
  }
  if (Avx512Bf16Kernels() == nullptr) {
    EXPECT_EQ(&chosen, Avx2Kernels());
    return;
  }
  // Peaks as they come (measurement noise aside): the choice goes with them.
  const FmaPeakResult fma = MeasureFmaPeak(nullptr, 0.05);
  const FmaPeakResult dot = PrefillGemmPeak(*Avx512Bf16Kernels(), nullptr, fma, 0.05);
  const double ratio = dot.gflops_per_cpu_s / fma.gflops_per_cpu_s;
  if (ratio > 0.9) {
    EXPECT_EQ(&chosen, Avx512Bf16Kernels()) << "BF16 dot products at " << ratio << " of FMA";
  } else if (ratio < 0.6) {
    EXPECT_EQ(&chosen, Avx2Kernels()) << "BF16 dot products at " << ratio << " of FMA";
  }
  EXPECT_NE(&chosen, AmxKernels());
}

TEST(DispatchTest, BetterPrefillGemmFromThreeQuartersOfTheFmaPeak) {
  EXPECT_TRUE(BetterPrefillGemm(100, 100));
  EXPECT_TRUE(BetterPrefillGemm(75, 100));
  EXPECT_FALSE(BetterPrefillGemm(74, 100));
  EXPECT_FALSE(BetterPrefillGemm(50, 100));
}

TEST(DispatchTest, PrefillGemmPeakCountsTwoBf16ProductsPerProduct) {
  const FmaPeakResult fma = MeasureFmaPeak(nullptr, 0.02);
  const FmaPeakResult same = PrefillGemmPeak(ReferenceKernels(), nullptr, fma);
  EXPECT_EQ(same.gflops, fma.gflops);
  EXPECT_STREQ(same.isa, fma.isa);
  if (Avx512Bf16Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  const FmaPeakResult instruction = MeasureBf16DotPeak(nullptr, 0.05);
  const FmaPeakResult split = PrefillGemmPeak(*Avx512Bf16Kernels(), nullptr, fma, 0.05);
  EXPECT_STREQ(split.isa, "avx512bf16-vdpbf16ps, 2 per product");
  // Two runs of the same loop: equal up to the machine's noise, so within a factor of 1.5 of
  // half the instruction's peak and far from the whole of it.
  EXPECT_GT(split.gflops_per_cpu_s, instruction.gflops_per_cpu_s / 2 / 1.5);
  EXPECT_LT(split.gflops_per_cpu_s, instruction.gflops_per_cpu_s / 2 * 1.5);
}

}  // namespace
}  // namespace kimi::kernels
