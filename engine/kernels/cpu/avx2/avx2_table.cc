// The AVX2+FMA table; offered only when the CPU reports both AVX2 and FMA.
#include "kernels/cpu/avx2/avx2.h"

namespace kimi::kernels {

const KernelTable* Avx2Kernels() {
  static const KernelTable table = {
      .isa = "avx2",
      .gemv_bf16 = avx2::GemvBf16,
      .gemm_bf16 = avx2::GemmBf16,
      .gemv_bf16_prepared_floats = avx2::GemvBf16PreparedFloats,
      .prepare_gemv_bf16 = avx2::PrepareGemvBf16,
      .gemv_bf16_prepared = avx2::GemvBf16Prepared,
      .gemv_mxfp4 = avx2::GemvMxfp4Q16,  // int16 activations: error bound in its source
      .gemm_mxfp4 = avx2::GemmMxfp4,
      .rms_norm = avx2::RmsNorm,
      .situ = avx2::Situ,
      .silu = avx2::Silu,
      .sigmoid = avx2::Sigmoid,
      .mul_sigmoid = avx2::MulSigmoid,
      .softmax = avx2::Softmax,
      .l2_normalize = avx2::L2Normalize,
      .causal_conv1d_silu = avx2::CausalConv1dSilu,
      .kda_recurrent = avx2::KdaRecurrent,
      .kda_chunked = avx2::KdaChunked,
      .kda_gate = avx2::KdaGate,
      .mla_absorbed = avx2::MlaAbsorbed,
      .heads_transposed_bf16 = avx2::HeadsTransposedBf16,
      .topk_route = avx2::TopKRoute,
      .gemv_int8 = avx2::GemvInt8,
      .gemm_int8 = avx2::GemmInt8,
  };
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &table : nullptr;
}

}  // namespace kimi::kernels
