// The forward pass's glue kernels (model_ops.h). Element-wise ones use a grid-stride loop; the
// row-wise ones (MixDepth, MlaCacheAppend) one block per row with block sums.
#include <algorithm>
#include <string>

#include "gpu/device_common.cuh"
#include "gpu/model_ops.h"

namespace kimi::gpu {
namespace {

using detail::BlockSum;
using detail::CeilDiv;
using detail::kBlockThreads;
using detail::Native;

constexpr int kMaxWarps = kBlockThreads / KIMI_WARP_SIZE;

using detail::ElementGrid;

__global__ void EmbedRowsKernel(const uint16_t* __restrict__ embed, const int32_t* __restrict__ tokens, int64_t R,
                                int64_t D, float* __restrict__ out) {
  KIMI_GRID_STRIDE_LOOP(i, R * D) {
    const int64_t r = i / D, c = i % D;
    out[i] = detail::Bf16Bits(embed[int64_t(tokens[r]) * D + c]);
  }
}

__global__ void AddKernel(float* y, const float* x, int64_t n) {
  KIMI_GRID_STRIDE_LOOP(i, n) y[i] += x[i];
}

__global__ void CopyRowsKernel(const float* __restrict__ src, int64_t ld_src, const int32_t* __restrict__ index,
                               int64_t rows, int64_t cols, float* __restrict__ dst, int64_t ld_dst) {
  KIMI_GRID_STRIDE_LOOP(i, rows * cols) {
    const int64_t r = i / cols, c = i % cols;
    const int64_t from = index ? int64_t(index[r]) : r;
    dst[r * ld_dst + c] = src[from * ld_src + c];
  }
}

__global__ void HeadsTransposedKernel(const float* __restrict__ x, int64_t ldx, int64_t xs,
                                      const uint16_t* __restrict__ w, int64_t ws, int64_t M, int64_t H,
                                      int64_t n_in, int64_t n_out, float* __restrict__ y) {
  KIMI_GRID_STRIDE_LOOP(i, M * H * n_out) {
    const int64_t c = i % n_out, mh = i / n_out, h = mh % H, m = mh / H;
    const float* xr = x + m * ldx + h * xs;
    const uint16_t* wh = w + h * ws + c;
    float acc = 0.0f;
    for (int64_t n = 0; n < n_in; ++n) acc += xr[n] * detail::Bf16Bits(wh[n * n_out]);
    y[i] = acc;
  }
}

__global__ void CombineKernel(const float* __restrict__ rows_out, const int32_t* __restrict__ row_begin,
                              const int32_t* __restrict__ packed, const float* __restrict__ weight, int64_t R,
                              int64_t cols, float* __restrict__ acc) {
  KIMI_GRID_STRIDE_LOOP(i, R * cols) {
    const int64_t r = i / cols, c = i % cols;
    float s = 0.0f;
    for (int32_t e = row_begin[r]; e < row_begin[r + 1]; ++e) s += weight[e] * rows_out[int64_t(packed[e]) * cols + c];
    acc[i] = s;
  }
}

struct DepthCandidates {
  const float* c[kMaxDepthCandidates];
  int n;
};

// One block per row: each candidate's logit from two block sums, the softmax in every thread
// (all threads hold the same logits), then the weighted sum per element in candidate order.
__global__ void __launch_bounds__(kBlockThreads)
    MixDepthKernel(DepthCandidates cands, const float* __restrict__ w, int64_t D, float eps,
                   float* __restrict__ out) {
  __shared__ float scratch[kMaxWarps];
  const int64_t r = blockIdx.x;
  float logit[kMaxDepthCandidates];
  float top = -INFINITY;
  for (int c = 0; c < cands.n; ++c) {
    const float* v = cands.c[c] + r * D;
    float dot = 0.0f, sq = 0.0f;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      dot += v[i] * w[i];
      sq += v[i] * v[i];
    }
    dot = BlockSum(dot, scratch);
    sq = BlockSum(sq, scratch);
    logit[c] = dot / sqrtf(sq / float(D) + eps);
    top = fmaxf(top, logit[c]);
  }
  float sum = 0.0f;
  for (int c = 0; c < cands.n; ++c) sum += (logit[c] = expf(logit[c] - top));
  float* o = out + r * D;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
    float acc = 0.0f;
    for (int c = 0; c < cands.n; ++c) acc += (logit[c] / sum) * cands.c[c][r * D + i];
    o[i] = acc;
  }
}

// One block per appended token.
__global__ void __launch_bounds__(kBlockThreads)
    MlaCacheAppendKernel(const float* __restrict__ kv, int64_t ld_kv, int64_t past, const float* __restrict__ norm,
                         float eps, int64_t rc, int64_t dr, float* pool, const int32_t* __restrict__ block_table,
                         int64_t page_tokens) {
  __shared__ float scratch[kMaxWarps];
  const int64_t j = blockIdx.x, t = past + j, row = rc + dr;
  const float* src = kv + j * ld_kv;
  float* dst = pool + (int64_t(block_table[t / page_tokens]) * page_tokens + t % page_tokens) * row;
  float sq = 0.0f;
  for (int64_t i = threadIdx.x; i < rc; i += blockDim.x) sq += src[i] * src[i];
  sq = BlockSum(sq, scratch);
  const float factor = 1.0f / sqrtf(sq / float(rc) + eps);
  for (int64_t i = threadIdx.x; i < row; i += blockDim.x) dst[i] = i < rc ? src[i] * factor * norm[i] : src[i];
}

Status Launched(const char* what) {
  return StatusFromGpu(gpuGetLastError(), what);
}

}  // namespace

Status EmbedRows(const uint16_t* embed, const int32_t* tokens, int64_t R, int64_t D, float* out,
                 const GpuStream& stream) {
  if (R < 0 || D < 1) return Status::InvalidArgument("EmbedRows: bad shape");
  if (R == 0) return Status::OK();
  EmbedRowsKernel<<<ElementGrid(R * D), kBlockThreads, 0, Native(stream)>>>(embed, tokens, R, D, out);
  return Launched("launch EmbedRows");
}

Status AddInPlace(float* y, const float* x, int64_t n, const GpuStream& stream) {
  if (n <= 0) return Status::OK();
  AddKernel<<<ElementGrid(n), kBlockThreads, 0, Native(stream)>>>(y, x, n);
  return Launched("launch AddInPlace");
}

Status CopyRows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst,
                const GpuStream& stream) {
  if (rows < 0 || cols < 1 || ld_src < cols || ld_dst < cols) return Status::InvalidArgument("CopyRows: bad shape");
  if (rows == 0) return Status::OK();
  CopyRowsKernel<<<ElementGrid(rows * cols), kBlockThreads, 0, Native(stream)>>>(src, ld_src, nullptr, rows, cols,
                                                                                 dst, ld_dst);
  return Launched("launch CopyRows");
}

Status GatherRows(const float* src, int64_t ld_src, const int32_t* index, int64_t n, int64_t cols, float* dst,
                  int64_t ld_dst, const GpuStream& stream) {
  if (n < 0 || cols < 1 || ld_src < cols || ld_dst < cols) return Status::InvalidArgument("GatherRows: bad shape");
  if (n == 0) return Status::OK();
  CopyRowsKernel<<<ElementGrid(n * cols), kBlockThreads, 0, Native(stream)>>>(src, ld_src, index, n, cols, dst,
                                                                              ld_dst);
  return Launched("launch GatherRows");
}

Status MixDepth(std::span<const float* const> blocks, const float* partial, const float* w, int64_t R,
                int64_t D, float eps, float* out, const GpuStream& stream) {
  if (R < 0 || D < 1) return Status::InvalidArgument("MixDepth: bad shape");
  if (blocks.size() + 1 > size_t(kMaxDepthCandidates)) {
    return Status::InvalidArgument("MixDepth: more than " + std::to_string(kMaxDepthCandidates) + " candidates");
  }
  if (R == 0) return Status::OK();
  if (blocks.empty()) return CopyDeviceToDeviceAsync(out, partial, sizeof(float) * R * D, stream);
  DepthCandidates cands{};
  for (size_t c = 0; c < blocks.size(); ++c) cands.c[c] = blocks[c];
  cands.c[blocks.size()] = partial;
  cands.n = static_cast<int>(blocks.size()) + 1;
  MixDepthKernel<<<static_cast<unsigned>(R), kBlockThreads, 0, Native(stream)>>>(cands, w, D, eps, out);
  return Launched("launch MixDepth");
}

Status MlaCacheAppend(const float* kv, int64_t ld_kv, int64_t count, int64_t past, const float* norm, float eps,
                      int64_t rc, int64_t dr, float* pool, const int32_t* block_table, int64_t page_tokens,
                      const GpuStream& stream) {
  if (count < 0 || past < 0 || rc < 1 || dr < 0 || ld_kv < rc + dr || page_tokens < 1)
    return Status::InvalidArgument("MlaCacheAppend: bad shape");
  if (count == 0) return Status::OK();
  MlaCacheAppendKernel<<<static_cast<unsigned>(count), kBlockThreads, 0, Native(stream)>>>(
      kv, ld_kv, past, norm, eps, rc, dr, pool, block_table, page_tokens);
  return Launched("launch MlaCacheAppend");
}

Status HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                           int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                           const GpuStream& stream) {
  if (M < 0 || H < 1 || n_in < 1 || n_out < 1) return Status::InvalidArgument("HeadsTransposedBf16: bad shape");
  if (M == 0) return Status::OK();
  HeadsTransposedKernel<<<ElementGrid(M * H * n_out), kBlockThreads, 0, Native(stream)>>>(
      x, ldx, x_head_stride, w, w_head_stride, M, H, n_in, n_out, y);
  return Launched("launch HeadsTransposedBf16");
}

Status CombineExpertRows(const float* rows_out, const int32_t* row_begin, const int32_t* packed,
                         const float* weight, int64_t R, int64_t cols, float* acc, const GpuStream& stream) {
  if (R < 0 || cols < 1) return Status::InvalidArgument("CombineExpertRows: bad shape");
  if (R == 0) return Status::OK();
  CombineKernel<<<ElementGrid(R * cols), kBlockThreads, 0, Native(stream)>>>(rows_out, row_begin, packed, weight,
                                                                             R, cols, acc);
  return Launched("launch CombineExpertRows");
}

}  // namespace kimi::gpu
