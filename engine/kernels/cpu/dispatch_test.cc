// The dispatch table: every entry of every table is filled, and the active table is the one
// KIMI_KERNELS names where the machine has it, else AVX2 exactly when the CPU supports it.
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cpu/kernel_test_util.h"
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

TEST(DispatchTest, ActiveTableFollowsTheCpuAndTheOverride) {
  const char* force = std::getenv("KIMI_KERNELS");
  const KernelTable* forced = force != nullptr ? KernelsNamed(force) : nullptr;
  const KernelTable* expected = forced != nullptr          ? forced
                                : Avx2Kernels() != nullptr ? Avx2Kernels()
                                                           : &ReferenceKernels();
  EXPECT_EQ(&ActiveKernels(), expected);
  EXPECT_EQ(std::string(ActiveIsa()), expected->isa);
}

}  // namespace
}  // namespace kimi::kernels
