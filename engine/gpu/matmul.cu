// Dense products y = x·Wᵀ with BF16 or MXFP4 weights (gpu_ops.h).
//
// Decode (M <= kGemvMaxRows): one warp per weight row. Each lane reads 16 bytes of the row per
// step (8 BF16 values, or one whole MXFP4 block of 32 values plus its scale byte), decodes them
// to fp32 in registers and multiplies them into all M activation rows, so every weight byte
// crosses the memory bus once per call; a warp sum finishes each output. MXFP4 blocks are summed
// in fp32 and scaled once per block.
//
// Prefill (larger M): a 64×64 output tile per block, 32-wide k steps staged in shared memory
// with the weights decoded on the way in. From kTensorCoreMinRows rows on CUDA (sm_80 and
// later) the tile runs on the tensor cores (WMMA 16×16×16, BF16 in, fp32 accumulate): the
// weights are exact in BF16 (BF16 itself, or an E2M1 value times a power of two), and each fp32
// activation is split into three BF16 terms x = x₀ + x₁ + x₂ (each the rounding of what the
// previous ones left), which together carry its 24-bit significand, so the product equals the
// fp32 one up to summation order at a third of the BF16 tensor-core rate. Fewer rows, and every
// HIP build, run the portable fp32 FMA tile (4×4 outputs per thread of 256).
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

#if !defined(__HIPCC__) && !defined(KIMI_GPU_HIP)
#include <cuda_bf16.h>
#include <mma.h>
#define KIMI_GPU_TENSOR_CORES 1
#endif

namespace kimi::gpu {
namespace {

using detail::CeilDiv;
using detail::kBlockThreads;

constexpr int kWarpsPerBlock = kBlockThreads / KIMI_WARP_SIZE;

bool Aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

__device__ __forceinline__ void DecodeBf16x8(const uint4& pk, float* out) {
  const uint32_t words[4] = {pk.x, pk.y, pk.z, pk.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = __uint_as_float(words[i] << 16);
    out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
  }
}

// kVec: weight rows, x rows and x are 16-byte aligned and K % 8 == 0.
template <int MR, bool kVec>
__global__ void __launch_bounds__(kBlockThreads)
    GemvBf16Kernel(const float* __restrict__ x, int64_t ldx, const uint16_t* __restrict__ w, int64_t N,
                   int64_t K, float* __restrict__ y, int64_t ldy) {
  const int lane = threadIdx.x % KIMI_WARP_SIZE;
  const int64_t n = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / KIMI_WARP_SIZE;
  if (n >= N) return;  // the whole warp leaves together
  const uint16_t* wr = w + n * K;
  float acc[MR];
#pragma unroll
  for (int m = 0; m < MR; ++m) acc[m] = 0.0f;
  if constexpr (kVec) {
    const uint4* w8 = reinterpret_cast<const uint4*>(wr);
    for (int64_t c = lane; c < K / 8; c += KIMI_WARP_SIZE) {
      float wf[8];
      DecodeBf16x8(w8[c], wf);
#pragma unroll
      for (int m = 0; m < MR; ++m) {
        const float4* xv = reinterpret_cast<const float4*>(x + m * ldx + c * 8);
        const float4 a = xv[0], b = xv[1];
        acc[m] += a.x * wf[0] + a.y * wf[1] + a.z * wf[2] + a.w * wf[3] + b.x * wf[4] + b.y * wf[5] +
                  b.z * wf[6] + b.w * wf[7];
      }
    }
  } else {
    for (int64_t k = lane; k < K; k += KIMI_WARP_SIZE) {
      const float wf = detail::Bf16Bits(wr[k]);
#pragma unroll
      for (int m = 0; m < MR; ++m) acc[m] += x[m * ldx + k] * wf;
    }
  }
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    const float v = detail::WarpSum(acc[m]);
    if (lane == 0) y[m * ldy + n] = v;
  }
}

// kVec: the packed rows (K/2 bytes, a multiple of 16) and x rows are 16-byte aligned.
template <int MR, bool kVec>
__global__ void __launch_bounds__(kBlockThreads)
    GemvMxfp4Kernel(const float* __restrict__ x, int64_t ldx, const uint8_t* __restrict__ packed,
                    const uint8_t* __restrict__ scale, int64_t N, int64_t K, float* __restrict__ y,
                    int64_t ldy) {
  __shared__ float lut[16];
  if (threadIdx.x < 16) lut[threadIdx.x] = detail::E2M1Value(threadIdx.x);
  __syncthreads();
  const int lane = threadIdx.x % KIMI_WARP_SIZE;
  const int64_t n = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / KIMI_WARP_SIZE;
  if (n >= N) return;
  const int64_t blocks = K / 32;
  const uint8_t* pr = packed + n * (K / 2);
  const uint8_t* sr = scale + n * blocks;
  float acc[MR];
#pragma unroll
  for (int m = 0; m < MR; ++m) acc[m] = 0.0f;
  for (int64_t b = lane; b < blocks; b += KIMI_WARP_SIZE) {
    uint32_t words[4];
    if constexpr (kVec) {
      const uint4 pk = reinterpret_cast<const uint4*>(pr)[b];
      words[0] = pk.x, words[1] = pk.y, words[2] = pk.z, words[3] = pk.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint8_t* q = pr + b * 16 + i * 4;
        words[i] = uint32_t(q[0]) | uint32_t(q[1]) << 8 | uint32_t(q[2]) << 16 | uint32_t(q[3]) << 24;
      }
    }
    float wf[32];
    detail::DecodeMxfp4Block(words, lut, wf);
    const float s = detail::E8M0(sr[b]);
#pragma unroll
    for (int m = 0; m < MR; ++m) acc[m] += detail::DotBlock32<kVec>(x + m * ldx + b * 32, wf) * s;
  }
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    const float v = detail::WarpSum(acc[m]);
    if (lane == 0) y[m * ldy + n] = v;
  }
}

// Weight element (n, k) as fp32, for the tiled GEMM.
struct Bf16Weights {
  const uint16_t* w;
  int64_t K;
  __device__ float operator()(int64_t n, int64_t k, const float*) const {
    return detail::Bf16Bits(w[n * K + k]);
  }
};

struct Mxfp4Weights {
  const uint8_t* packed;
  const uint8_t* scale;
  int64_t K;
  __device__ float operator()(int64_t n, int64_t k, const float* lut) const {
    const uint8_t byte = packed[n * (K / 2) + k / 2];
    const int nibble = (k % 2 == 0) ? (byte & 15) : (byte >> 4);
    return lut[nibble] * detail::E8M0(scale[n * (K / 32) + k / 32]);
  }
};

constexpr int kTileM = 64, kTileN = 64, kTileK = 32;

template <class Weights>
__global__ void __launch_bounds__(kBlockThreads)
    GemmKernel(const float* __restrict__ x, int64_t ldx, Weights weights, int64_t M, int64_t N, int64_t K,
               float* __restrict__ y, int64_t ldy) {
  __shared__ float xs[kTileK][kTileM + 1];  // transposed: xs[k][m]
  __shared__ float ws[kTileK][kTileN + 1];  // ws[k][n]
  __shared__ float lut[16];
  if (threadIdx.x < 16) lut[threadIdx.x] = detail::E2M1Value(threadIdx.x);
  const int tid = threadIdx.x;
  const int tm = tid / 16, tn = tid % 16;  // this thread's 4×4 outputs: rows tm*4.., columns tn*4..
  const int64_t m0 = int64_t(blockIdx.y) * kTileM, n0 = int64_t(blockIdx.x) * kTileN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    __syncthreads();  // the previous step's tiles are consumed (and the LUT is written)
#pragma unroll
    for (int i = 0; i < kTileM * kTileK / kBlockThreads; ++i) {
      const int e = tid + i * kBlockThreads;
      const int r = e / kTileK, c = e % kTileK;  // consecutive threads walk along k: coalesced
      const int64_t m = m0 + r, n = n0 + r, k = k0 + c;
      xs[c][r] = (m < M && k < K) ? x[m * ldx + k] : 0.0f;
      ws[c][r] = (n < N && k < K) ? weights(n, k, lut) : 0.0f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = xs[kk][tm * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = ws[kk][tn * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t m = m0 + tm * 4 + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t n = n0 + tn * 4 + j;
      if (n < N) y[m * ldy + n] = acc[i][j];
    }
  }
}

#if defined(KIMI_GPU_TENSOR_CORES)
constexpr int kTcThreads = 128;  // 4 warps, each a 32×32 quarter of the 64×64 tile
constexpr int kTcTerms = 3;      // BF16 terms per fp32 activation
constexpr int kTcLd = kTileK + 8;  // shared row stride (elements): a multiple of 8, rows 32-byte aligned

template <class Weights>
__global__ void __launch_bounds__(kTcThreads)
    GemmTensorCoreKernel(const float* __restrict__ x, int64_t ldx, Weights weights, int64_t M, int64_t N,
                         int64_t K, float* __restrict__ y, int64_t ldy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  __shared__ __align__(32) __nv_bfloat16 xs[kTcTerms][kTileM][kTcLd];  // xs[t][m][k]
  __shared__ __align__(32) __nv_bfloat16 ws[kTileN][kTcLd];            // ws[n][k]: B = Wᵀ column-major
  __shared__ __align__(32) float cs[kTileM][kTileN + 4];
  __shared__ float lut[16];
  if (threadIdx.x < 16) lut[threadIdx.x] = detail::E2M1Value(threadIdx.x);
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;  // this warp's 32×32 quarter
  const int64_t m0 = int64_t(blockIdx.y) * kTileM, n0 = int64_t(blockIdx.x) * kTileN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    __syncthreads();  // the previous step's tiles are consumed (and the LUT is written)
#pragma unroll 4
    for (int i = 0; i < kTileM * kTileK / kTcThreads; ++i) {
      const int e = tid + i * kTcThreads;
      const int r = e / kTileK, c = e % kTileK;  // consecutive threads walk along k: coalesced
      const int64_t m = m0 + r, n = n0 + r, k = k0 + c;
      float xv = (m < M && k < K) ? x[m * ldx + k] : 0.0f;
#pragma unroll
      for (int t = 0; t < kTcTerms; ++t) {
        const __nv_bfloat16 term = __float2bfloat16_rn(xv);
        xs[t][r][c] = term;
        xv -= __bfloat162float(term);
      }
      ws[r][c] = __float2bfloat16_rn((n < N && k < K) ? weights(n, k, lut) : 0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 16) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &ws[wn * 32 + j * 16][kk], kTcLd);
      // The smallest terms first, so the large ones are added last.
#pragma unroll
      for (int t = kTcTerms - 1; t >= 0; --t) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
          wmma::load_matrix_sync(a, &xs[t][wm * 32 + i * 16][kk], kTcLd);
#pragma unroll
          for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], kTileN + 4, wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < kTileM * kTileN; e += kTcThreads) {
    const int r = e / kTileN, c = e % kTileN;
    const int64_t m = m0 + r, n = n0 + c;
    if (m < M && n < N) y[m * ldy + n] = cs[r][c];
  }
#endif
}
#endif

// The prefill product: tensor cores from kTensorCoreMinRows rows where the build has them.
template <class Weights>
void LaunchGemm(const float* x, int64_t ldx, Weights weights, int64_t M, int64_t N, int64_t K, float* y,
                int64_t ldy, gpuStream_t s) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(N, kTileN)), static_cast<unsigned>(CeilDiv(M, kTileM)));
#if defined(KIMI_GPU_TENSOR_CORES)
  if (M >= kTensorCoreMinRows) {
    GemmTensorCoreKernel<<<grid, kTcThreads, 0, s>>>(x, ldx, weights, M, N, K, y, ldy);
    return;
  }
#endif
  GemmKernel<<<grid, kBlockThreads, 0, s>>>(x, ldx, weights, M, N, K, y, ldy);
}

template <int MR>
void LaunchGemvBf16(bool vec, const float* x, int64_t ldx, const uint16_t* w, int64_t N, int64_t K, float* y,
                    int64_t ldy, gpuStream_t s) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(N, kWarpsPerBlock)));
  if (vec) {
    GemvBf16Kernel<MR, true><<<grid, kBlockThreads, 0, s>>>(x, ldx, w, N, K, y, ldy);
  } else {
    GemvBf16Kernel<MR, false><<<grid, kBlockThreads, 0, s>>>(x, ldx, w, N, K, y, ldy);
  }
}

template <int MR>
void LaunchGemvMxfp4(bool vec, const float* x, int64_t ldx, const uint8_t* p, const uint8_t* sc, int64_t N,
                     int64_t K, float* y, int64_t ldy, gpuStream_t s) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(N, kWarpsPerBlock)));
  if (vec) {
    GemvMxfp4Kernel<MR, true><<<grid, kBlockThreads, 0, s>>>(x, ldx, p, sc, N, K, y, ldy);
  } else {
    GemvMxfp4Kernel<MR, false><<<grid, kBlockThreads, 0, s>>>(x, ldx, p, sc, N, K, y, ldy);
  }
}

// Calls launch.template operator()<M>() for M in 1..kGemvMaxRows.
template <class Launch>
void ForRowCount(int64_t M, const Launch& launch) {
  switch (M) {
    case 1:
      launch.template operator()<1>();
      break;
    case 2:
      launch.template operator()<2>();
      break;
    case 3:
      launch.template operator()<3>();
      break;
    case 4:
      launch.template operator()<4>();
      break;
    case 5:
      launch.template operator()<5>();
      break;
    case 6:
      launch.template operator()<6>();
      break;
    case 7:
      launch.template operator()<7>();
      break;
    default:
      launch.template operator()<8>();
      break;
  }
}
static_assert(kGemvMaxRows == 8, "ForRowCount covers 1..8");

Status CheckShape(int64_t M, int64_t N, int64_t K, int64_t ldx, int64_t ldy) {
  if (M < 1 || N < 1 || K < 1) return Status::InvalidArgument("matmul: M, N and K must be positive");
  if (ldx < K || ldy < N) return Status::InvalidArgument("matmul: a row stride is shorter than its row");
  return Status::OK();
}

}  // namespace

Status MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                  int64_t ldy, const GpuStream& stream) {
  KIMI_RETURN_IF_ERROR(CheckShape(M, N, K, ldx, ldy));
  gpuStream_t s = detail::Native(stream);
  if (M <= kGemvMaxRows) {
    const bool vec = K % 8 == 0 && ldx % 4 == 0 && Aligned16(w) && Aligned16(x);
    ForRowCount(M, [&]<int MR>() { LaunchGemvBf16<MR>(vec, x, ldx, w, N, K, y, ldy, s); });
  } else {
    LaunchGemm(x, ldx, Bf16Weights{w, K}, M, N, K, y, ldy, s);
  }
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("MatmulBf16");
  return Status::OK();
}

Status MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                   int64_t N, int64_t K, float* y, int64_t ldy, const GpuStream& stream) {
  KIMI_RETURN_IF_ERROR(CheckShape(M, N, K, ldx, ldy));
  if (K % 32 != 0) return Status::InvalidArgument("MatmulMxfp4: K must be a multiple of 32");
  gpuStream_t s = detail::Native(stream);
  if (M <= kGemvMaxRows) {
    const bool vec = ldx % 4 == 0 && Aligned16(w_packed) && Aligned16(x);
    ForRowCount(M, [&]<int MR>() { LaunchGemvMxfp4<MR>(vec, x, ldx, w_packed, w_scale, N, K, y, ldy, s); });
  } else {
    LaunchGemm(x, ldx, Mxfp4Weights{w_packed, w_scale, K}, M, N, K, y, ldy, s);
  }
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("MatmulMxfp4");
  return Status::OK();
}

}  // namespace kimi::gpu
