// MLA absorbed attention for a run of query rows (gpu_ops.h MlaPrefillAttention): the same
// result as MlaAbsorbedAttention, tiled so the queries of one head share each cache read.
// Block (head, tile of kQueries query rows); the cache is walked in tiles of kTokens tokens up
// to the tile's last query position:
//   1. the token tile [c_kv | k_pe] goes to shared memory (the query tile is already there);
//   2. the kQueries × kTokens scores, a warp per (query, token) pair, causal mask applied;
//   3. one thread per query row updates its running max and sum and the tile's probabilities;
//   4. every thread rescales and adds into the outputs it owns: value columns
//      threadIdx.x + 256·c (c < kSlots) of every query row of the tile, in registers.
// fp32 online softmax, as the decode kernel (mla.cu); shared memory ~38 KB.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::kBlockThreads;

constexpr int kQueries = 8;
constexpr int kTokens = 8;
constexpr int kMaxRow = static_cast<int>(kMlaMaxRank + kMlaPrefillMaxRope);
constexpr int kSlots = static_cast<int>(kMlaMaxRank) / kBlockThreads;  // value columns per thread

// f(c, i) for each latent column i = threadIdx.x + 256·c (c < kSlots) below R: the output
// columns this thread owns, c indexing its registers.
template <class F>
__device__ __forceinline__ void ForOwnedColumns(int64_t R, F&& f) {
#pragma unroll
  for (int c = 0; c < kSlots; ++c) {
    const int64_t i = threadIdx.x + int64_t(c) * kBlockThreads;
    if (i < R) f(c, i);
  }
}

__global__ void __launch_bounds__(kBlockThreads)
    MlaPrefillKernel(const float* __restrict__ q_latent, const float* __restrict__ q_pe, int64_t nq, int64_t H,
                     int64_t q_pos0, kernels::MlaPagedCache cache, float scale, float* __restrict__ out_latent) {
  __shared__ float q[kQueries][kMaxRow];
  __shared__ float kv[kTokens][kMaxRow];
  __shared__ float prob[kQueries][kTokens];
  __shared__ float row_max[kQueries], row_sum[kQueries], correction[kQueries];
  const int64_t h = blockIdx.x, j0 = int64_t(blockIdx.y) * kQueries;
  const int64_t R = cache.kv_rank, P = cache.rope_dim, row = R + P;
  const int64_t queries = nq - j0 < kQueries ? nq - j0 : kQueries;
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  const int warps = kBlockThreads / KIMI_WARP_SIZE;

  for (int64_t e = threadIdx.x; e < kQueries * row; e += blockDim.x) {
    const int64_t jq = e / row, i = e % row, j = j0 + jq;
    float x = 0.0f;
    if (jq < queries) x = i < R ? q_latent[(j * H + h) * R + i] : q_pe[(j * H + h) * P + (i - R)];
    q[jq][i] = x;
  }
  if (threadIdx.x < kQueries) {
    row_max[threadIdx.x] = -INFINITY;
    row_sum[threadIdx.x] = 0.0f;
  }
  float acc[kQueries][kSlots];
#pragma unroll
  for (int jq = 0; jq < kQueries; ++jq)
#pragma unroll
    for (int c = 0; c < kSlots; ++c) acc[jq][c] = 0.0f;

  const int64_t n_ctx = q_pos0 + j0 + queries;  // tokens the tile's last query sees
  for (int64_t t0 = 0; t0 < n_ctx; t0 += kTokens) {
    __syncthreads();  // the previous tile's kv and prob are consumed
    for (int64_t e = threadIdx.x; e < kTokens * row; e += blockDim.x) {
      const int64_t tt = e / row, i = e % row, t = t0 + tt;
      float x = 0.0f;
      if (t < n_ctx) {
        const int64_t page = cache.block_table[t / cache.page_size];
        x = cache.pool[(page * cache.page_size + t % cache.page_size) * row + i];
      }
      kv[tt][i] = x;
    }
    __syncthreads();
    for (int pair = warp; pair < kQueries * kTokens; pair += warps) {
      const int jq = pair / kTokens, tt = pair % kTokens;
      float dot = 0.0f;
      for (int64_t i = lane; i < row; i += KIMI_WARP_SIZE) dot += q[jq][i] * kv[tt][i];
      dot = detail::WarpSum(dot);
      const bool visible = jq < queries && t0 + tt <= q_pos0 + j0 + jq;
      if (lane == 0) prob[jq][tt] = visible ? dot * scale : -INFINITY;
    }
    __syncthreads();
    if (threadIdx.x < kQueries) {
      const int jq = threadIdx.x;
      float m = row_max[jq];
      for (int tt = 0; tt < kTokens; ++tt) m = fmaxf(m, prob[jq][tt]);
      // A row that sees no token of this tile keeps m = −inf: nothing to add, nothing to rescale.
      const float corr = m == -INFINITY ? 1.0f : expf(row_max[jq] - m);
      float sum = row_sum[jq] * corr;
      for (int tt = 0; tt < kTokens; ++tt) {
        const float p = prob[jq][tt] == -INFINITY ? 0.0f : expf(prob[jq][tt] - m);
        prob[jq][tt] = p;
        sum += p;
      }
      row_max[jq] = m;
      row_sum[jq] = sum;
      correction[jq] = corr;
    }
    __syncthreads();
    ForOwnedColumns(R, [&](int c, int64_t i) {
#pragma unroll
      for (int jq = 0; jq < kQueries; ++jq) {
        float a = acc[jq][c] * correction[jq];
#pragma unroll
        for (int tt = 0; tt < kTokens; ++tt) a += prob[jq][tt] * kv[tt][i];
        acc[jq][c] = a;
      }
    });
  }
  __syncthreads();
  ForOwnedColumns(R, [&](int c, int64_t i) {
#pragma unroll
    for (int jq = 0; jq < kQueries; ++jq)
      if (jq < queries) out_latent[((j0 + jq) * H + h) * R + i] = acc[jq][c] / row_sum[jq];
  });
}

}  // namespace

Status MlaPrefillAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H, int64_t q_pos0,
                           const kernels::MlaPagedCache& cache, float scale, float* out_latent,
                           const GpuStream& stream) {
  if (nq < 0 || H < 1 || q_pos0 < 0 || cache.kv_rank < 1 || cache.rope_dim < 0 || cache.page_size < 1) {
    return Status::InvalidArgument("MlaPrefillAttention: bad shape");
  }
  if (cache.kv_rank > kMlaMaxRank || cache.rope_dim > kMlaPrefillMaxRope) {
    return Status::InvalidArgument("MlaPrefillAttention: kv_rank or rope_dim past the kernel's limits");
  }
  if (nq == 0) return Status::OK();
  const dim3 grid(static_cast<unsigned>(H), static_cast<unsigned>(detail::CeilDiv(nq, kQueries)));
  MlaPrefillKernel<<<grid, kBlockThreads, 0, detail::Native(stream)>>>(q_latent, q_pe, nq, H, q_pos0, cache, scale,
                                                                       out_latent);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("MlaPrefillAttention");
  return Status::OK();
}

}  // namespace kimi::gpu
