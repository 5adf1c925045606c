// MoE top-k routing (gpu_ops.h): one block per token. The sigmoid scores and the biased choice
// values sit in shared memory; top_k rounds of a block-wide (value, index) maximum pick the
// experts in the reference's order (biased score descending, lower index on ties). top_k is
// small (8–16 in K3), so k rounds of an E-wide scan cost less than a sort.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::ArgBest;
using detail::kBlockThreads;

__global__ void __launch_bounds__(kBlockThreads)
    TopKRouteKernel(const float* __restrict__ logits, const float* __restrict__ bias, int64_t E, int top_k,
                    bool renormalize, float scaling, int32_t* __restrict__ ids, float* __restrict__ weights) {
  extern __shared__ float smem[];  // score[E] | choice[E]
  __shared__ ArgBest scratch[kBlockThreads / KIMI_WARP_SIZE];
  __shared__ int chosen[kRouteMaxTopK];
  float* score = smem;
  float* choice = smem + E;
  const int64_t t = blockIdx.x;
  for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
    score[e] = detail::SigmoidOf(logits[t * E + e]);
    choice[e] = score[e] + (bias ? bias[e] : 0.0f);
  }
  __syncthreads();
  for (int r = 0; r < top_k; ++r) {
    ArgBest mine{-INFINITY, detail::kNoIndex};
    for (int64_t e = threadIdx.x; e < E; e += blockDim.x)
      if (detail::Better(choice[e], int(e), mine)) mine = ArgBest{choice[e], int(e)};
    const ArgBest best = detail::BlockArgBest(mine, scratch);
    if (threadIdx.x == 0) {
      chosen[r] = best.index;
      if (best.index != detail::kNoIndex)
        choice[best.index] = __uint_as_float(0x7fc00000u);  // NaN: never again
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int r = 0; r < top_k; ++r) sum += score[chosen[r]];
    for (int r = 0; r < top_k; ++r) {
      float w = score[chosen[r]];
      if (renormalize) w /= sum;
      ids[t * top_k + r] = chosen[r];
      weights[t * top_k + r] = w * scaling;
    }
  }
}

}  // namespace

Status TopKRoute(const float* logits, const float* bias, int64_t T, int64_t E, int top_k, bool renormalize,
                 float scaling, int32_t* ids, float* weights, const GpuStream& stream) {
  if (T < 0 || E < 1 || top_k < 1 || top_k > E) return Status::InvalidArgument("TopKRoute: bad shape");
  if (top_k > kRouteMaxTopK) return Status::InvalidArgument("TopKRoute: top_k exceeds kRouteMaxTopK");
  if (E > 4096) return Status::InvalidArgument("TopKRoute: more than 4096 experts");
  if (T == 0) return Status::OK();
  const size_t smem = size_t(2 * E) * sizeof(float);
  TopKRouteKernel<<<static_cast<unsigned>(T), kBlockThreads, smem, detail::Native(stream)>>>(
      logits, bias, E, top_k, renormalize, scaling, ids, weights);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("TopKRoute");
  return Status::OK();
}

}  // namespace kimi::gpu
