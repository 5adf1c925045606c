// MLA absorbed attention over the paged latent cache (gpu_ops.h). One block per (head, query
// row). Each warp takes every W-th cache token, computes its score with a warp-wide dot product
// over [c_kv | k_pe], and keeps an online softmax (running max m, running sum l, and the
// p-weighted sum of c_kv spread over its lanes). The warps' partial results are then rescaled
// to the common max and added in warp order. Scores, sums and outputs are fp32 (the reference
// uses double), hence the tolerance in gpu_ops_test.cc.
//
// Known limit: one block per (head, query) reads that head's whole context, so a decode step
// of few heads over a long context uses few of the card's multiprocessors; splitting the
// context over blocks (split-K) is the next step (docs/gpu.md).
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::kBlockThreads;

constexpr int kWarps = kBlockThreads / KIMI_WARP_SIZE;
constexpr int kPerLane = kMlaMaxRank / KIMI_WARP_SIZE;  // c_kv elements each lane accumulates

__global__ void __launch_bounds__(kBlockThreads)
    MlaAbsorbedKernel(const float* __restrict__ q_latent, const float* __restrict__ q_pe, int64_t H,
                      int64_t q_pos0, kernels::MlaPagedCache cache, float scale,
                      float* __restrict__ out_latent) {
  __shared__ float q[2 * kMlaMaxRank];  // [q_latent | q_pe] of this head and query
  __shared__ float warp_max[kWarps], warp_sum[kWarps];
  __shared__ float warp_acc[kWarps][kMlaMaxRank];
  const int64_t h = blockIdx.x, jq = blockIdx.y;
  const int64_t R = cache.kv_rank, P = cache.rope_dim, row = R + P;
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  for (int64_t i = threadIdx.x; i < row; i += blockDim.x)
    q[i] = i < R ? q_latent[(jq * H + h) * R + i] : q_pe[(jq * H + h) * P + (i - R)];
  __syncthreads();

  const int64_t n_ctx = q_pos0 + jq + 1;
  float m = -INFINITY, l = 0.0f, acc[kPerLane];
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) acc[c] = 0.0f;
  for (int64_t t = warp; t < n_ctx; t += kWarps) {
    const int64_t page = cache.block_table[t / cache.page_size];
    const float* kv = cache.pool + (page * cache.page_size + t % cache.page_size) * row;
    float dot = 0.0f;
    for (int64_t i = lane; i < row; i += KIMI_WARP_SIZE) dot += q[i] * kv[i];
    const float score = detail::WarpSum(dot) * scale;
    const float m_new = fmaxf(m, score);
    const float correction = expf(m - m_new), p = expf(score - m_new);
    l = l * correction + p;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int64_t i = lane + int64_t(c) * KIMI_WARP_SIZE;
      if (i < R) acc[c] = acc[c] * correction + p * kv[i];
    }
    m = m_new;
  }
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum[warp] = l;
  }
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int64_t i = lane + int64_t(c) * KIMI_WARP_SIZE;
    if (i < R) warp_acc[warp][i] = acc[c];
  }
  __syncthreads();

  float m_all = warp_max[0];
  for (int w = 1; w < kWarps; ++w) m_all = fmaxf(m_all, warp_max[w]);
  float l_all = 0.0f;
  for (int w = 0; w < kWarps; ++w) l_all += warp_sum[w] * expf(warp_max[w] - m_all);
  float* o = out_latent + (jq * H + h) * R;
  for (int64_t i = threadIdx.x; i < R; i += blockDim.x) {
    float v = 0.0f;
    for (int w = 0; w < kWarps; ++w) v += warp_acc[w][i] * expf(warp_max[w] - m_all);
    o[i] = v / l_all;
  }
}

}  // namespace

Status MlaAbsorbedAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H, int64_t q_pos0,
                            const kernels::MlaPagedCache& cache, float scale, float* out_latent,
                            const GpuStream& stream) {
  if (nq < 0 || H < 1 || q_pos0 < 0 || cache.page_size < 1 || cache.kv_rank < 1 || cache.rope_dim < 0)
    return Status::InvalidArgument("MlaAbsorbedAttention: bad shape");
  if (cache.kv_rank > kMlaMaxRank || cache.rope_dim > kMlaMaxRank)
    return Status::InvalidArgument("MlaAbsorbedAttention: kv_rank or rope_dim exceeds kMlaMaxRank");
  if (nq > 65535)
    return Status::InvalidArgument("MlaAbsorbedAttention: more than 65535 query rows in one call");
  if (nq == 0) return Status::OK();
  const dim3 grid(static_cast<unsigned>(H), static_cast<unsigned>(nq));
  MlaAbsorbedKernel<<<grid, kBlockThreads, 0, detail::Native(stream)>>>(q_latent, q_pe, H, q_pos0, cache,
                                                                        scale, out_latent);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("MlaAbsorbedAttention");
  return Status::OK();
}

}  // namespace kimi::gpu
