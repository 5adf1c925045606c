#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels {

const KernelTable& ReferenceKernels() {
  static const KernelTable table = {
      .isa = "scalar",
      .gemv_bf16 = ref::MatmulBf16,
      .gemm_bf16 = ref::MatmulBf16,
      .gemv_bf16_prepared_floats = nullptr,
      .prepare_gemv_bf16 = nullptr,
      .gemv_bf16_prepared = nullptr,
      .gemv_mxfp4 = ref::MatmulMxfp4,
      .gemm_mxfp4 = ref::MatmulMxfp4,
      .gemm_f32 = ref::GemmF32,
      .rms_norm = ref::RmsNorm,
      .situ = ref::Situ,
      .silu = ref::Silu,
      .sigmoid = ref::Sigmoid,
      .mul_sigmoid = ref::MulSigmoid,
      .softmax = ref::Softmax,
      .l2_normalize = ref::L2Normalize,
      .causal_conv1d_silu = ref::CausalConv1dSilu,
      .kda_recurrent = ref::KdaRecurrent,
      .kda_chunked = ref::KdaChunked,
      .kda_gate = ref::KdaGate,
      .mla_absorbed = ref::MlaAbsorbed,
      .heads_transposed_bf16 = ref::HeadsTransposedBf16,
      .topk_route = ref::TopKRoute,
      .gemv_int8 = ref::MatmulInt8,
      .gemm_int8 = ref::MatmulInt8,
  };
  return table;
}

}  // namespace kimi::kernels
