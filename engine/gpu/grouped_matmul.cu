// Routed experts' MXFP4 products, every active expert in one launch (gpu_ops.h).
//
// Block (column block x, group y): each warp owns one output column n of the group's expert and
// walks the group's rows 8 at a time; per chunk a lane reads whole MXFP4 blocks of the weight
// row (16 bytes + its scale byte), decodes them in registers and multiplies them into the
// chunk's rows, exactly as the decode GEMV does (so a group of up to 8 rows gives bit for bit
// what MatmulMxfp4 gives it), then a warp sum per row. Chunks after the first re-read the
// weight row, mostly from L2.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::CeilDiv;
using detail::kBlockThreads;

constexpr int kWarpsPerBlock = kBlockThreads / KIMI_WARP_SIZE;
constexpr int kChunkRows = 8;

template <bool kVecX>
__global__ void __launch_bounds__(kBlockThreads)
    GroupedMxfp4Kernel(const float* __restrict__ x, int64_t ldx, const uint8_t* const* __restrict__ packed,
                       const uint8_t* const* __restrict__ scale, const int32_t* __restrict__ expert,
                       const int32_t* __restrict__ first, const int32_t* __restrict__ count, int64_t N, int64_t K,
                       float* __restrict__ y, int64_t ldy) {
  __shared__ float lut[16];
  if (threadIdx.x < 16) lut[threadIdx.x] = detail::E2M1Value(threadIdx.x);
  __syncthreads();
  const int lane = threadIdx.x % KIMI_WARP_SIZE;
  const int64_t n = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / KIMI_WARP_SIZE;
  if (n >= N) return;  // the whole warp leaves together
  const int g = blockIdx.y;
  const int e = expert[g];
  const int64_t row0 = first[g], rows = count[g], blocks = K / 32;
  const uint8_t* pr = packed[e] + n * (K / 2);
  const uint8_t* sr = scale[e] + n * blocks;
  for (int64_t c0 = 0; c0 < rows; c0 += kChunkRows) {
    const int64_t live = rows - c0 < kChunkRows ? rows - c0 : kChunkRows;
    const float* xc = x + (row0 + c0) * ldx;
    float acc[kChunkRows];
#pragma unroll
    for (int m = 0; m < kChunkRows; ++m) acc[m] = 0.0f;
    for (int64_t b = lane; b < blocks; b += KIMI_WARP_SIZE) {
      const uint4 pk = reinterpret_cast<const uint4*>(pr)[b];  // rows of K/2 bytes, K % 32 == 0: aligned
      const uint32_t words[4] = {pk.x, pk.y, pk.z, pk.w};
      float wf[32];
      detail::DecodeMxfp4Block(words, lut, wf);
      const float s = detail::E8M0(sr[b]);
#pragma unroll
      for (int m = 0; m < kChunkRows; ++m) {
        if (m >= live) break;
        acc[m] += detail::DotBlock32<kVecX>(xc + m * ldx + b * 32, wf) * s;
      }
    }
#pragma unroll
    for (int m = 0; m < kChunkRows; ++m) {
      const float v = detail::WarpSum(acc[m]);  // every lane takes part (m is warp-uniform)
      if (lane == 0 && m < live) y[(row0 + c0 + m) * ldy + n] = v;
    }
  }
}

}  // namespace

Status GroupedMatmulMxfp4(const float* x, int64_t ldx, const uint8_t* const* packed, const uint8_t* const* scale,
                          const int32_t* expert, const int32_t* first, const int32_t* count, int64_t groups,
                          int64_t N, int64_t K, float* y, int64_t ldy, const GpuStream& stream) {
  if (groups < 0 || N < 1 || K < 1 || ldx < K || ldy < N) return Status::InvalidArgument("GroupedMatmulMxfp4: bad shape");
  if (K % 32 != 0) return Status::InvalidArgument("GroupedMatmulMxfp4: K must be a multiple of 32");
  if (groups > 65535) return Status::InvalidArgument("GroupedMatmulMxfp4: more than 65535 groups");
  if (groups == 0) return Status::OK();
  const dim3 grid(static_cast<unsigned>(CeilDiv(N, kWarpsPerBlock)), static_cast<unsigned>(groups));
  const bool vec_x = ldx % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  gpuStream_t s = detail::Native(stream);
  if (vec_x) {
    GroupedMxfp4Kernel<true><<<grid, kBlockThreads, 0, s>>>(x, ldx, packed, scale, expert, first, count, N, K, y, ldy);
  } else {
    GroupedMxfp4Kernel<false><<<grid, kBlockThreads, 0, s>>>(x, ldx, packed, scale, expert, first, count, N, K, y, ldy);
  }
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("GroupedMatmulMxfp4");
  return Status::OK();
}

}  // namespace kimi::gpu
