// GPU kernels of the Kimi K3 forward pass: the same ops, layouts and semantics as the CPU entry
// points in kernels/cpu/kernels.h (read that header for each op's formula, shapes and
// preconditions), with device pointers and a stream instead of a thread pool. The KdaArgs and
// MlaPagedCache structs are shared with the CPU; here every pointer in them is a device pointer.
//
// Every function only queues work on `stream` and returns; a launch failure (bad configuration,
// an earlier asynchronous fault) comes back as a Status. Read results after stream.Synchronize().
// Arithmetic is fp32 throughout (BF16 and MXFP4 weights are decoded to fp32 in registers); the
// CPU reference accumulates some sums in double, so results agree up to the per-op tolerances
// of gpu_ops_test.cc. docs/gpu.md explains each kernel's parallel layout.
//
// Thread safety: reentrant; calls on one stream run in order.
#pragma once

#include <cstdint>

#include "gpu/gpu_device.h"
#include "kernels/cpu/kernels.h"
#include "kimi/status.h"

namespace kimi::gpu {

// ---- Dense products: y[m, n] = Σ_k x[m, k]·W[n, k] ----
// M <= kGemvMaxRows streams each weight row once for all M vectors (decode); larger M runs the
// tiled GEMM (prefill).
inline constexpr int64_t kGemvMaxRows = 8;
// From this many rows a CUDA build (sm_80+) runs the GEMM on the tensor cores, with each fp32
// activation split into three BF16 terms so the result keeps fp32 accuracy (matmul.cu); HIP
// builds and fewer rows run the fp32 FMA tile.
inline constexpr int64_t kTensorCoreMinRows = 64;

Status MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                  int64_t ldy, const GpuStream& stream);
// Precondition: K % 32 == 0.
Status MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                   int64_t N, int64_t K, float* y, int64_t ldy, const GpuStream& stream);

// ---- Routed experts: one MXFP4 product per expert group, all groups in one launch ----
// The rows are packed expert after expert (gpu/forward_plan.h ExpertPlan); group g is expert
// expert[g] over rows [first[g], first[g] + count[g]):
//   y[r, :] = x[r, :] · W_eᵀ for r in the group, W_e = (packed[e] [N, K/2], scale[e] [N, K/32]).
// expert, first, count: device int32 [groups]; packed, scale: device arrays of device pointers
// indexed by expert id (each 16-byte aligned). A group of up to 8 rows gives exactly what
// MatmulMxfp4 gives those rows. Precondition: K % 32 == 0; groups <= 65535.
Status GroupedMatmulMxfp4(const float* x, int64_t ldx, const uint8_t* const* packed, const uint8_t* const* scale,
                          const int32_t* expert, const int32_t* first, const int32_t* count, int64_t groups,
                          int64_t N, int64_t K, float* y, int64_t ldy, const GpuStream& stream);

// ---- Element-wise and row-wise (out may equal the input) ----
Status RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out,
               const GpuStream& stream);
// Situ: beta_lin = +inf (a config without a linear β) passes `up` unchanged.
Status Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out,
            const GpuStream& stream);
Status Silu(const float* x, int64_t n, float* out, const GpuStream& stream);
Status Sigmoid(const float* x, int64_t n, float* out, const GpuStream& stream);
Status MulSigmoid(const float* x, const float* gate, int64_t n, float* out, const GpuStream& stream);
Status Softmax(const float* x, int64_t rows, int64_t n, float* out, const GpuStream& stream);
Status L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out,
                   const GpuStream& stream);
Status KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H, int64_t dk,
               float lower_bound, float* g, const GpuStream& stream);

// ---- Short causal convolution + SiLU (state layout [width−1, C], oldest first) ----
Status CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w, const float* bias,
                        int width, float* state, float* out, int64_t ldo, const GpuStream& stream);

// ---- Kimi Delta Attention ----
// The recurrence token by token with each head's state held in registers for the whole call.
// Precondition: dk <= kKdaMaxKeyDim.
inline constexpr int64_t kKdaMaxKeyDim = 512;
Status KdaRecurrent(const kernels::KdaArgs& a, const GpuStream& stream);
// Prefill: the chunked WY/UT form (kernels/cpu/kda_chunk.h) in chunks of kKdaChunkTokens (the
// CPU takes kKdaChunk = 32); the same result as KdaRecurrent up to rounding. `scratch`: device memory of
// KdaChunkedScratchFloats(T, H, dk) floats (about 4·dk + 128 floats per token and head).
// Precondition: dk <= kKdaChunkMaxKeyDim.
inline constexpr int64_t kKdaChunkTokens = 64;
inline constexpr int64_t kKdaChunkMaxKeyDim = 256;
int64_t KdaChunkedScratchFloats(int64_t T, int64_t H, int64_t dk);
Status KdaChunked(const kernels::KdaArgs& a, float* scratch, const GpuStream& stream);

// ---- MLA absorbed attention over the paged latent cache (nq query rows of one sequence) ----
// Precondition: kv_rank <= kMlaMaxRank, rope_dim <= kMlaMaxRank.
inline constexpr int64_t kMlaMaxRank = 512;
Status MlaAbsorbedAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H, int64_t q_pos0,
                            const kernels::MlaPagedCache& cache, float scale, float* out_latent,
                            const GpuStream& stream);
// The same for a run of query rows (prefill): the queries of one head share every cache read
// (tiles of 8 queries × 8 tokens). Precondition: kv_rank <= kMlaMaxRank, rope_dim <= kMlaPrefillMaxRope.
inline constexpr int64_t kMlaPrefillMaxRope = 64;
Status MlaPrefillAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H, int64_t q_pos0,
                           const kernels::MlaPagedCache& cache, float scale, float* out_latent,
                           const GpuStream& stream);

// ---- MoE routing (per token: sigmoid scores, top_k by score + bias, lower index on ties) ----
// Precondition: 1 <= top_k <= E, top_k <= kRouteMaxTopK.
inline constexpr int kRouteMaxTopK = 64;
Status TopKRoute(const float* logits, const float* bias, int64_t T, int64_t E, int top_k, bool renormalize,
                 float scaling, int32_t* ids, float* weights, const GpuStream& stream);

// ---- Sampling ----
// Greedy choice per row: ids[r] = argmax_v logits[r, v], the lower index winning ties (the
// Sampler's temperature-0 rule). NaN never wins; a row of NaN only gives -1.
// logits: [rows, V] with row stride ld.
Status ArgmaxRows(const float* logits, int64_t rows, int64_t V, int64_t ld, int32_t* ids,
                  const GpuStream& stream);

}  // namespace kimi::gpu
