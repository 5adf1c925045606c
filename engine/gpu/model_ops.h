// GPU kernels that only the device-resident forward pass (gpu_model.h) needs: the glue between
// the ops of gpu_ops.h that the CPU forward pass does with plain loops and memcpy (embedding
// gather, residual add, strided copies, the depth mixture of the attention residuals, appending
// to the MLA latent cache, the W_UK absorption, the weighted combine of routed experts). Each
// one computes exactly what the CPU code it mirrors computes (named per function), in fp32.
//
// Every function only queues work on `stream`; pointers are device pointers unless a parameter
// says host. Thread safety: reentrant; calls on one stream run in order.
#pragma once

#include <cstdint>
#include <span>

#include "gpu/gpu_device.h"
#include "kimi/status.h"

namespace kimi::gpu {

// out[r, :] = fp32(embed[tokens[r], :]) for r < R; embed: BF16 [V, D]; tokens: int32 [R].
Status EmbedRows(const uint16_t* embed, const int32_t* tokens, int64_t R, int64_t D, float* out,
                 const GpuStream& stream);

// y[i] += x[i], i < n.
Status AddInPlace(float* y, const float* x, int64_t n, const GpuStream& stream);

// dst[r, :cols] = src[r, :cols] with row strides ld_src / ld_dst (r < rows).
Status CopyRows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst,
                const GpuStream& stream);

// dst[i, :cols] = src[index[i], :cols] (i < n); index: int32 device array.
Status GatherRows(const float* src, int64_t ld_src, const int32_t* index, int64_t n, int64_t cols, float* dst,
                  int64_t ld_dst, const GpuStream& stream);

// The attention residuals' depth mixture, model::MixDepth (model/attn_residual.h):
//   out[r] = Σ_c softmax_c(c[r]·w / √(mean(c[r]²) + eps)) · c[r]  over c ∈ {blocks..., partial}.
// blocks: host array of device pointers, each [R, D]; w: [D] (norm ⊙ proj). No blocks: out = partial.
// Precondition: blocks.size() < kMaxDepthCandidates; out does not alias an input.
inline constexpr int kMaxDepthCandidates = 64;
Status MixDepth(std::span<const float* const> blocks, const float* partial, const float* w, int64_t R,
                int64_t D, float eps, float* out, const GpuStream& stream);

// Appends `count` tokens to an MLA latent cache, as MlaForward does on the CPU: token j (at
// position past + j) stores [RMSNorm(kv[j, :rc]; norm, eps) | kv[j, rc:rc+dr]] in its page slot.
// kv: [count, rc + dr] (row stride ld_kv); pool/block_table as kernels::MlaPagedCache.
Status MlaCacheAppend(const float* kv, int64_t ld_kv, int64_t count, int64_t past, const float* norm,
                      float eps, int64_t rc, int64_t dr, float* pool, const int32_t* block_table,
                      int64_t page_tokens, const GpuStream& stream);

// kernels::HeadsTransposedBf16 (kernels/cpu/kernels.h):
//   y[m, h, :] = Σ_n x[m·ldx + h·x_head_stride + n] · W_h[n, :],  W_h = w + h·w_head_stride, [n_in, n_out].
// y: [M, H, n_out] contiguous.
Status HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                           int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                           const GpuStream& stream);

// The weighted sum of routed expert outputs per token (MoeForward's acc), in the CPU's order:
//   acc[r, :] = Σ_{e in row_begin[r] .. row_begin[r+1]} weight[e] · rows_out[packed[e], :]
// starting from 0 and adding the entries in order. rows_out: [*, cols] contiguous; acc: [R, cols].
Status CombineExpertRows(const float* rows_out, const int32_t* row_begin, const int32_t* packed,
                         const float* weight, int64_t R, int64_t cols, float* acc, const GpuStream& stream);

}  // namespace kimi::gpu
