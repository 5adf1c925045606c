// Device helpers shared by the kernels of engine/gpu/: fp32 decoding of BF16 and MXFP4 (the
// formats of kimi/dtype.h), warp and block sums, launch-size arithmetic. Included by .cu files only.
// Thread safety: pure device functions.
#pragma once

#include <cstdint>

#include "gpu/gpu_device.h"
#include "gpu/gpu_runtime.h"

namespace kimi::gpu::detail {

inline constexpr int kBlockThreads = 256;

inline int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Blocks for one thread per element with a grid-stride loop (at most 2^20 blocks).
inline unsigned ElementGrid(int64_t n) {
  const int64_t blocks = CeilDiv(n, kBlockThreads);
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 20) ? (1 << 20) : blocks));
}

// for (i over [0, n)) spread over the whole grid.
#define KIMI_GRID_STRIDE_LOOP(i, n)                                         \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

inline gpuStream_t Native(const GpuStream& stream) {
  return static_cast<gpuStream_t>(stream.native());
}

__device__ __forceinline__ float Bf16Bits(uint32_t bits16) {
  return __uint_as_float(bits16 << 16);
}

// 2^(e−127) with E8M0's NaN at 255; e = 0 is the subnormal 2^−127, as std::ldexp gives.
__device__ __forceinline__ float E8M0(uint32_t e) {
  if (e == 0) return __uint_as_float(0x00400000u);
  if (e == 255) return __uint_as_float(0x7fc00000u);
  return __uint_as_float(e << 23);
}

// E2M1 code (4 bits, bit 3 = sign) to fp32. The caller keeps this table in shared memory.
__host__ __device__ constexpr float E2M1Value(int code) {
  constexpr float kMag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return (code & 8) ? -kMag[code & 7] : kMag[code & 7];
}

// The 32 values of one MXFP4 block from its 16 packed bytes (as four little-endian words):
// element i is nibble i%8 of word i/8 (low nibble = even element), unscaled. lut: E2M1Value table.
__device__ __forceinline__ void DecodeMxfp4Block(const uint32_t (&words)[4], const float* lut, float (&wf)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) wf[i] = lut[(words[i / 8] >> (4 * (i % 8))) & 15u];
}

// Σ_i xb[i]·wf[i] over one block of 32, in the order the MXFP4 GEMVs use (kVec: xb is 16-byte aligned).
template <bool kVec>
__device__ __forceinline__ float DotBlock32(const float* xb, const float (&wf)[32]) {
  float part = 0.0f;
  if constexpr (kVec) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float4 a = reinterpret_cast<const float4*>(xb)[i];
      part += a.x * wf[4 * i] + a.y * wf[4 * i + 1] + a.z * wf[4 * i + 2] + a.w * wf[4 * i + 3];
    }
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) part += xb[i] * wf[i];
  }
  return part;
}

__device__ __forceinline__ float WarpSum(float v) {
  for (int lane_mask = KIMI_WARP_SIZE / 2; lane_mask > 0; lane_mask >>= 1) v += KIMI_SHFL_XOR(v, lane_mask);
  return v;
}

__device__ __forceinline__ float WarpMax(float v) {
  for (int lane_mask = KIMI_WARP_SIZE / 2; lane_mask > 0; lane_mask >>= 1)
    v = fmaxf(v, KIMI_SHFL_XOR(v, lane_mask));
  return v;
}

// Sum over the whole block, returned to every thread. `scratch` holds one float per warp.
// Precondition: every thread of the block calls it; blockDim.x is a multiple of the warp size.
__device__ __forceinline__ float BlockSum(float v, float* scratch) {
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  const int warps = blockDim.x / KIMI_WARP_SIZE;
  v = WarpSum(v);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += scratch[w];  // same order in every thread
  return total;
}

__device__ __forceinline__ float BlockMax(float v, float* scratch) {
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  const int warps = blockDim.x / KIMI_WARP_SIZE;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float m = scratch[0];
  for (int w = 1; w < warps; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

// (value, index) pairs ordered as the CPU's greedy choice and routing sort order: the larger
// value first, the lower index on ties; NaN is never better than anything.
struct ArgBest {
  float value;
  int index;  // kNoIndex when nothing has been seen
};
inline constexpr int kNoIndex = 0x7fffffff;

__device__ __forceinline__ bool Better(float v, int i, const ArgBest& b) {
  return v > b.value || (v == b.value && i < b.index);
}

// The best pair over the block, returned to every thread. `scratch` holds one pair per warp.
// Precondition: every thread of the block calls it.
__device__ __forceinline__ ArgBest BlockArgBest(ArgBest mine, ArgBest* scratch) {
  for (int lane_mask = KIMI_WARP_SIZE / 2; lane_mask > 0; lane_mask >>= 1) {
    const float v = KIMI_SHFL_XOR(mine.value, lane_mask);
    const int i = KIMI_SHFL_XOR(mine.index, lane_mask);
    if (Better(v, i, mine)) mine = ArgBest{v, i};
  }
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  __syncthreads();
  if (lane == 0) scratch[warp] = mine;
  __syncthreads();
  ArgBest best{-INFINITY, kNoIndex};
  for (int w = 0; w < int(blockDim.x / KIMI_WARP_SIZE); ++w)
    if (Better(scratch[w].value, scratch[w].index, best)) best = scratch[w];
  return best;
}

__device__ __forceinline__ float SigmoidOf(float x) {
  return 1.0f / (1.0f + expf(-x));
}

}  // namespace kimi::gpu::detail
