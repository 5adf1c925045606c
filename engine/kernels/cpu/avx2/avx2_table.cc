// The AVX2+FMA table, offered only when the CPU reports both AVX2 and FMA, and the two tables
// that differ from it only in the prefill GEMM (BF16 dot products: vdpbf16ps, AMX tiles),
// offered where core/cpu_features.h says the CPU (and for AMX the OS) allows them.
#include "kernels/cpu/avx2/avx2.h"
#include "core/cpu_features.h"

namespace kimi::kernels {
namespace {

const KernelTable& Avx2Table() {
  static const KernelTable table = {
      .isa = "avx2",
      .gemv_bf16 = avx2::GemvBf16,
      .gemm_bf16 = avx2::GemmBf16,
      .gemv_bf16_prepared_floats = avx2::GemvBf16PreparedFloats,
      .prepare_gemv_bf16 = avx2::PrepareGemvBf16,
      .gemv_bf16_prepared = avx2::GemvBf16Prepared,
      .gemv_mxfp4 = avx2::GemvMxfp4Q16,  // int16 activations: error bound in its source
      .gemm_mxfp4 = avx2::GemmMxfp4,
      .gemm_f32 = avx2::GemmF32,
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
  return table;
}

// The AVX2 table with `gemm` as its prefill GEMM. Decode (gemv_bf16, up to 64 rows) keeps fp32
// activations: it is bound by reading the weights, not by the arithmetic.
KernelTable WithBf16DotGemm(const char* isa, MatmulBf16Fn gemm) {
  KernelTable table = Avx2Table();
  table.isa = isa;
  table.gemm_bf16 = gemm;
  return table;
}

}  // namespace

const KernelTable* Avx2Kernels() {
  static const bool supported = cpu::HasAvx2Fma();
  return supported ? &Avx2Table() : nullptr;
}

const KernelTable* Avx512Bf16Kernels() {
  static const KernelTable table = WithBf16DotGemm("avx512bf16", avx2::GemmBf16Dot512);
  return Avx2Kernels() != nullptr && cpu::HasAvx512Bf16() ? &table : nullptr;
}

const KernelTable* AmxKernels() {
  static const KernelTable table = WithBf16DotGemm("amx", avx2::GemmBf16Amx);
  return Avx2Kernels() != nullptr && cpu::HasAmxBf16() ? &table : nullptr;
}

}  // namespace kimi::kernels
