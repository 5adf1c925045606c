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
#include "kernels/cpu/ref/reference.h"
#if defined(__x86_64__)
#include "kernels/cpu/avx2/avx2.h"
#endif

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
  EXPECT_EQ(ActiveKernelsNamed(), forced != nullptr);
}

TEST(DispatchTest, DefaultIsTheBetterPrefillGemmOfThePeaksItMeasured) {
  const DefaultChoice& choice = DefaultKernelChoice();
  EXPECT_EQ(&DefaultKernels(), choice.table);
  if (Avx2Kernels() == nullptr) {
    EXPECT_EQ(choice.table, &ReferenceKernels());
  } else if (Avx512Bf16Kernels() == nullptr) {
    EXPECT_EQ(choice.table, Avx2Kernels());
  } else {
    EXPECT_GT(choice.fma_peak, 0);
    EXPECT_GT(choice.dot_peak, 0);
    const bool amx_passed = AmxKernels() != nullptr && choice.amx_check == "passed";
    EXPECT_EQ(choice.amx_peak > 0, amx_passed) << choice.amx_check;
    EXPECT_EQ(choice.table, ChooseDefault(Avx2Kernels(), choice.fma_peak, Avx512Bf16Kernels(), choice.dot_peak,
                                          amx_passed ? AmxKernels() : nullptr, choice.amx_peak))
        << "per-product peaks " << choice.dot_peak << " and " << choice.amx_peak << ", FMA peak " << choice.fma_peak;
  }
  if (AmxKernels() == nullptr) {
    EXPECT_EQ(choice.amx_check, "");
  }
}

// Tables stand for themselves here; only their addresses matter.
TEST(DispatchTest, ChooseDefaultTakesTheHighestDotProductPeakThatBeatsTheFmaRule) {
  const KernelTable fma{}, dot{}, amx{};
  EXPECT_EQ(ChooseDefault(&fma, 100, nullptr, 0, nullptr, 0), &fma);
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 100, nullptr, 0), &dot);
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 50, nullptr, 0), &fma);      // Intel's vdpbf16ps: half
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 50, &amx, 800), &amx);      // AMX's tiles: 8×
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 100, &amx, 90), &dot);      // the higher of the two
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 100, &amx, 120), &amx);
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 50, &amx, 60), &fma);       // neither passes
  EXPECT_EQ(ChooseDefault(&fma, 100, &dot, 100, nullptr, 800), &dot);  // AMX left out: its peak ignored
}

// The check that admits the AMX GEMM to the default, on the GEMMs this machine can run: the
// avx512bf16 one and the AMX GEMM's code on the tile model pass; a GEMM one value off, one that
// writes nothing, and one that the CPU refuses fail, each saying why.
void OneValueOff(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                 int64_t ldy) {
  ref::MatmulBf16Dot(x, ldx, w, M, N, K, y, ldy);
  y[(M - 1) * ldy + N - 1] += 0.01f;
}
void WritesNothing(const float*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*, int64_t) {}
void Refused(const float*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*, int64_t) { __builtin_trap(); }

TEST(DispatchTest, CheckBf16DotGemmAgainstTheReference) {
  EXPECT_TRUE(CheckBf16DotGemm(ref::MatmulBf16Dot).ok());
  const Status off = CheckBf16DotGemm(OneValueOff);
  EXPECT_EQ(off.code(), Status::Code::kInternal);
  EXPECT_NE(off.message().find("M=33 N=130 K=300: y[32][129]"), std::string::npos) << off.ToString();
  EXPECT_EQ(CheckBf16DotGemm(WritesNothing).code(), Status::Code::kInternal);
  const Status refused = CheckBf16DotGemm(Refused);
  EXPECT_EQ(refused.code(), Status::Code::kUnavailable);
  EXPECT_NE(refused.message().find("SIGILL"), std::string::npos) << refused.ToString();
  if (Avx512Bf16Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  EXPECT_TRUE(CheckBf16DotGemm(Avx512Bf16Kernels()->gemm_bf16).ok());
#if defined(__x86_64__)
  EXPECT_TRUE(CheckBf16DotGemm(avx2::GemmBf16AmxOnTileModel).ok());
#endif
}

TEST(DispatchTest, BetterPrefillGemmFromThreeQuartersOfTheFmaPeak) {
  EXPECT_TRUE(BetterPrefillGemm(100, 100));
  EXPECT_TRUE(BetterPrefillGemm(75, 100));
  EXPECT_FALSE(BetterPrefillGemm(74, 100));
  EXPECT_FALSE(BetterPrefillGemm(50, 100));
}

TEST(DispatchTest, PerProductPeakCountsTwoBf16ProductsPerProduct) {
  FmaPeakResult instruction;
  instruction.gflops = 460;
  instruction.gflops_per_cpu_s = 470;
  instruction.threads = 2;
  instruction.isa = "avx512bf16-vdpbf16ps";
  const FmaPeakResult split = PerProductPeak(instruction, "per product");
  EXPECT_EQ(split.gflops, 230);
  EXPECT_EQ(split.gflops_per_cpu_s, 235);
  EXPECT_EQ(split.threads, 2);
  EXPECT_STREQ(split.isa, "per product");
}

// The dot-product table's peak is named after its instruction, per product of the split GEMM.
TEST(DispatchTest, PrefillGemmPeakOfTheDotProductTableNamesItsInstruction) {
  const KernelTable* dot = Avx512Bf16Kernels();
  if (dot == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  const FmaPeakResult fma = MeasureFmaPeak(nullptr, 0.01);
  EXPECT_STREQ(PrefillGemmPeak(*dot, nullptr, fma, 0.01).isa, "avx512bf16-vdpbf16ps, 2 per product");
}

TEST(DispatchTest, PrefillGemmPeakOfTheFmaTablesIsTheFmaPeak) {
  const FmaPeakResult fma = MeasureFmaPeak(nullptr, 0.01);
  for (const KernelTable* table : {&ReferenceKernels(), Avx2Kernels()}) {
    if (table == nullptr) continue;
    const FmaPeakResult peak = PrefillGemmPeak(*table, nullptr, fma);
    EXPECT_EQ(peak.gflops, fma.gflops) << table->isa;
    EXPECT_STREQ(peak.isa, fma.isa) << table->isa;
  }
  if (Avx512Bf16Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX512-BF16 (vdpbf16ps)";
  EXPECT_STREQ(PrefillGemmPeak(*Avx512Bf16Kernels(), nullptr, fma, 0.01).isa, "avx512bf16-vdpbf16ps, 2 per product");
}

}  // namespace
}  // namespace kimi::kernels
