// The dispatch table of the CPU kernels: one function pointer per kernel, filled once per
// instruction set. kernels.cc picks the table at first use (DefaultKernels, or the one
// KIMI_KERNELS names) and splits work over threads; every function in a table runs
// single-threaded on the slice it is given.
//
// The scalar table is the readable definition of each op (plain loops, ref/*.cc); every
// optimised table entry is tested against it (kernels/cpu/*_test.cc).
// Owns: nothing (static tables). Thread safety: the tables are immutable after start-up.
#pragma once

#include <cstdint>
#include <string>

#include "core/machine_limits.h"
#include "kernels/cpu/kernels.h"
#include "kimi/status.h"

namespace kimi::kernels {

using MatmulBf16Fn = void (*)(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N,
                              int64_t K, float* y, int64_t ldy);
// The decode GEMV in two parts, where a table has them: its activations rearranged once per
// product (`prepared` holds prepared_floats(M, K) floats) and then any slice of the weight rows
// run against them, so that a product split over threads does not rearrange them per slice.
using GemvBf16PreparedFloatsFn = int64_t (*)(int64_t M, int64_t K);
using PrepareGemvBf16Fn = void (*)(const float* x, int64_t ldx, int64_t M, int64_t K, float* prepared);
using GemvBf16PreparedFn = void (*)(const float* prepared, const float* x, int64_t ldx, const uint16_t* w, int64_t M,
                                    int64_t N, int64_t K, float* y, int64_t ldy);
using MatmulMxfp4Fn = void (*)(const float* x, int64_t ldx, const uint8_t* w_packed,
                               const uint8_t* w_scale, int64_t M, int64_t N, int64_t K, float* y,
                               int64_t ldy);
using RmsNormFn = void (*)(const float* x, const float* weight, int64_t rows, int64_t dim, float eps,
                           float* out);
using SituFn = void (*)(const float* gate, const float* up, int64_t n, float beta, float beta_lin,
                        float* out);
using UnaryFn = void (*)(const float* x, int64_t n, float* out);
using MulSigmoidFn = void (*)(const float* x, const float* gate, int64_t n, float* out);
using SoftmaxFn = void (*)(const float* x, int64_t rows, int64_t n, float* out);
using L2NormalizeFn = void (*)(const float* x, int64_t rows, int64_t dim, float eps, float scale,
                               float* out);
// Channels [0, C) of a conv whose state rows are ld_state apart (the full C of the layer).
using CausalConv1dSiluFn = void (*)(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                                    const float* bias, int width, float* state, int64_t ld_state,
                                    float* out, int64_t ldo);
// C[m, :] = beta_m·C[m, :] + alpha·(A·B)[m, :] in fp32, for the small products inside other
// kernels (the chunked KDA): B is [K, N] row-major (rows ldb apart); A's element (m, k) is at
// a[m·a_row + k·a_col], so A is read row-major (a_row = lda, a_col = 1) or transposed
// (a_row = 1, a_col = lda) without a copy. beta_m = beta·c_row_scale[m] where c_row_scale is
// given (M values: the KDA's state decays row by row as it is updated), else beta; beta_m == 0
// ignores the row's old contents (NaN included).
using GemmF32Fn = void (*)(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M,
                           int64_t N, int64_t K, float alpha, float beta, const float* c_row_scale, float* c,
                           int64_t ldc);
// Heads [0, a.H) of a KdaArgs (the dispatcher offsets pointers to slice heads).
using KdaFn = void (*)(const KdaArgs& a);
using KdaGateFn = void (*)(const float* f, const float* A_log, const float* dt_bias, int64_t T,
                           int64_t H, int64_t dk, float lower_bound, float* g);
// Heads [0, H) whose query rows are ld_q* apart (H_total*dim for the full layer).
using MlaFn = void (*)(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe,
                       int64_t nq, int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale,
                       float* out_latent, int64_t ld_out);
// Heads [0, H); y[m, h, :] starts at y + m*ldy + h*n_out (ldy = H_total*n_out for the full layer).
using HeadsTransposedBf16Fn = void (*)(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                                       int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out,
                                       float* y, int64_t ldy);
// One token.
using TopKRouteFn = void (*)(const float* logits, const float* bias, int64_t E, int top_k,
                             bool renormalize, float scaling, int32_t* ids, float* weights);

struct KernelTable {
  const char* isa;
  MatmulBf16Fn gemv_bf16;    // M small: weights streamed once for all rows of x
  MatmulBf16Fn gemm_bf16;    // any M; blocked for large M
  // gemv_bf16 in two parts (same bits); nullptr where the table has no such split.
  GemvBf16PreparedFloatsFn gemv_bf16_prepared_floats;
  PrepareGemvBf16Fn prepare_gemv_bf16;
  GemvBf16PreparedFn gemv_bf16_prepared;
  MatmulMxfp4Fn gemv_mxfp4;
  MatmulMxfp4Fn gemm_mxfp4;
  GemmF32Fn gemm_f32;
  RmsNormFn rms_norm;
  SituFn situ;
  UnaryFn silu;
  UnaryFn sigmoid;
  MulSigmoidFn mul_sigmoid;
  SoftmaxFn softmax;
  L2NormalizeFn l2_normalize;
  CausalConv1dSiluFn causal_conv1d_silu;
  KdaFn kda_recurrent;
  KdaFn kda_chunked;
  KdaGateFn kda_gate;
  MlaFn mla_absorbed;
  HeadsTransposedBf16Fn heads_transposed_bf16;
  TopKRouteFn topk_route;

  // Int8 weights × fp32 activations: w holds q + 128 per byte (compressed-tensors' pack-quantized
  // 8-bit layout), row n of W is w_scale[n] · (w[n, :] − 128).
  using MatmulInt8Fn = void (*)(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M,
                                int64_t N, int64_t K, float* y, int64_t ldy);
  MatmulInt8Fn gemv_int8;  // M small: each weight row streamed once for all rows of x
  MatmulInt8Fn gemm_int8;  // any M; blocked for large M
};

// The plain-loop reference; always available.
const KernelTable& ReferenceKernels();
// The AVX2+FMA table, or nullptr when this build or this CPU lacks AVX2/FMA.
const KernelTable* Avx2Kernels();
// The AVX2 table with its prefill GEMM (gemm_bf16) on BF16 dot products: each activation split
// into two BF16 values (hi + lo), exact products, fp32 sums (ref::MatmulBf16Dot); vdpbf16ps, or
// AMX tiles. nullptr where this build or this CPU (for AMX: or the OS) lacks them.
const KernelTable* Avx512Bf16Kernels();
const KernelTable* AmxKernels();
// BF16 products per product in those GEMMs: hi·w and lo·w.
inline constexpr int kBf16DotProductsPerProduct = 2;
// The table of that isa name ("scalar", "avx2", "avx512bf16", "amx"), or nullptr when the name
// is unknown or the machine lacks it.
const KernelTable* KernelsNamed(const char* isa);

// The measured peak of the products `table`'s prefill GEMM does, counted as that GEMM's own
// products (2 flops each): `fma` (MeasureFmaPeak with the same threads) for the FMA tables; for
// the BF16 dot-product tables PerProductPeak of their instruction's peak.
FmaPeakResult PrefillGemmPeak(const KernelTable& table, ThreadPool* pool, const FmaPeakResult& fma,
                              double seconds = 0.3);
// A BF16 dot-product instruction's peak per product of the split GEMM: over
// kBf16DotProductsPerProduct, named `name` (a string that outlives the result).
FmaPeakResult PerProductPeak(FmaPeakResult instruction, const char* name);
// Whether a prefill GEMM whose products peak at `dot_peak` is the better default than the FMA
// one at `fma_peak`: at 0.75 of it or more. The BF16 dot-product GEMM runs 0.86–0.89 of its
// instruction's peak where the FMA GEMM runs 0.60–0.72 of the FMA peak (docs/kernels.md), so it
// is the faster from ~0.8 on; the CPUs seen are far on either side (AMD Zen 4: 1.0; Intel cores
// issuing vdpbf16ps on one port of two: 0.5).
bool BetterPrefillGemm(double dot_peak, double fma_peak);
// A BF16 dot-product GEMM (the avx512bf16 or amx table's gemm_bf16) against ref::MatmulBf16Dot
// on this CPU, over two shapes that cross every block and tile edge, within the tolerance of
// the paths' tests: OK, Internal naming the first value that differs, or Unavailable where the
// CPU or the OS refused an instruction (SIGILL, caught: core/illegal_instruction.h). About 10
// million products.
Status CheckBf16DotGemm(MatmulBf16Fn fn);

// The default among measured candidates: `fma_table` (AVX2, or the reference), replaced by a
// dot-product table (nullptr where absent) whose per-product peak passes BetterPrefillGemm
// against `fma_peak` and is above that of the dot-product table chosen before it.
const KernelTable* ChooseDefault(const KernelTable* fma_table, double fma_peak, const KernelTable* dot, double dot_peak,
                                 const KernelTable* amx, double amx_peak);

// How the default table was chosen: the table, the per-CPU-second peaks measured on the calling
// thread at the first call (10 ms loops; 0 where not measured) and, where the CPU has AMX, the
// outcome of CheckBf16DotGemm on the amx table ("passed", or why it was left out; then
// amx_peak stays 0).
struct DefaultChoice {
  const KernelTable* table = nullptr;
  double fma_peak = 0;
  double dot_peak = 0;
  double amx_peak = 0;
  std::string amx_check;
};
// The table used when KIMI_KERNELS names none: ChooseDefault over the AVX2 table (else the
// reference), the avx512bf16 table and the amx table where the CPU has them, the amx table only
// after it passed CheckBf16DotGemm here (and its peak loop ran); docs/kernels.md "Dispatch".
const DefaultChoice& DefaultKernelChoice();
inline const KernelTable& DefaultKernels() { return *DefaultKernelChoice().table; }
// The table the entry points use: the one KIMI_KERNELS names in the environment, read at the
// first call (a name this machine lacks falls back to the default, with a warning), else
// DefaultKernels().
const KernelTable& ActiveKernels();
// Whether KIMI_KERNELS named the table ActiveKernels() returns (else it is DefaultKernels()).
bool ActiveKernelsNamed();

// The chunk length of KdaChunked: two sub-blocks of 16 (kda_chunk.h). A chunk's own products
// grow with its length while the state's do not, and on the CPU 32 measured 1.08× as fast as 64
// (16 as fast as 32, 48 and 128 slower; docs/kernels.md).
inline constexpr int64_t kKdaChunk = 32;
// The sub-block of the chunked KDA's products (kda_chunk.h).
inline constexpr int64_t kKdaSub = 16;

}  // namespace kimi::kernels
