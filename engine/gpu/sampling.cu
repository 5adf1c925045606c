// Greedy sampling on the device (gpu_ops.h): one block per row scans the vocabulary for the
// largest logit, the lower index winning ties, so only one int per row crosses back to the host.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::ArgBest;
using detail::kBlockThreads;

__global__ void __launch_bounds__(kBlockThreads)
    ArgmaxRowsKernel(const float* __restrict__ logits, int64_t V, int64_t ld, int32_t* __restrict__ ids) {
  __shared__ ArgBest scratch[kBlockThreads / KIMI_WARP_SIZE];
  const float* row = logits + int64_t(blockIdx.x) * ld;
  ArgBest mine{-INFINITY, detail::kNoIndex};
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x)
    if (detail::Better(row[v], int(v), mine)) mine = ArgBest{row[v], int(v)};
  const ArgBest best = detail::BlockArgBest(mine, scratch);
  if (threadIdx.x == 0) ids[blockIdx.x] = best.index == detail::kNoIndex ? -1 : best.index;
}

}  // namespace

Status ArgmaxRows(const float* logits, int64_t rows, int64_t V, int64_t ld, int32_t* ids,
                  const GpuStream& stream) {
  if (rows < 0 || V < 1 || ld < V) return Status::InvalidArgument("ArgmaxRows: bad shape");
  if (V >= detail::kNoIndex || rows > 0x7fffffff) return Status::InvalidArgument("ArgmaxRows: too large");
  if (rows == 0) return Status::OK();
  ArgmaxRowsKernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, detail::Native(stream)>>>(logits, V, ld,
                                                                                              ids);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("ArgmaxRows");
  return Status::OK();
}

}  // namespace kimi::gpu
