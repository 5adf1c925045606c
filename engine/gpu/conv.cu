// Depthwise causal convolution + SiLU (gpu_ops.h): one thread per channel walks the T tokens
// in order with its window of width values in registers, so the state update needs no second
// pass and decode (T = 1) reads each state value once.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::CeilDiv;
using detail::kBlockThreads;

template <int kWidth>
__global__ void __launch_bounds__(kBlockThreads)
    CausalConvSiluKernel(const float* __restrict__ x, int64_t ldx, int64_t T, int64_t C,
                         const float* __restrict__ w, const float* __restrict__ bias, float* state,
                         float* __restrict__ out, int64_t ldo) {
  constexpr int kHist = kWidth - 1;
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float window[kWidth];  // window[j] multiplies w[c, j]; window[kHist] is the current token
  float wc[kWidth];
#pragma unroll
  for (int j = 0; j < kHist; ++j) window[j] = state[j * C + c];
#pragma unroll
  for (int j = 0; j < kWidth; ++j) wc[j] = w[c * kWidth + j];
  const float b = bias ? bias[c] : 0.0f;
  for (int64_t t = 0; t < T; ++t) {
    window[kHist] = x[t * ldx + c];
    float acc = b;
#pragma unroll
    for (int j = 0; j < kWidth; ++j) acc += wc[j] * window[j];
    out[t * ldo + c] = acc / (1.0f + expf(-acc));
#pragma unroll
    for (int j = 0; j < kHist; ++j) window[j] = window[j + 1];
  }
#pragma unroll
  for (int j = 0; j < kHist; ++j) state[j * C + c] = window[j];
}

}  // namespace

Status CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w, const float* bias,
                        int width, float* state, float* out, int64_t ldo, const GpuStream& stream) {
  if (width < 2 || width > 8) return Status::InvalidArgument("CausalConv1dSilu: width must be in [2, 8]");
  if (T < 0 || C < 1 || ldx < C || ldo < C) return Status::InvalidArgument("CausalConv1dSilu: bad shape");
  if (T == 0) return Status::OK();
  const dim3 grid(static_cast<unsigned>(CeilDiv(C, kBlockThreads)));
  gpuStream_t s = detail::Native(stream);
  switch (width) {
    case 2:
      CausalConvSiluKernel<2><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    case 3:
      CausalConvSiluKernel<3><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    case 4:
      CausalConvSiluKernel<4><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    case 5:
      CausalConvSiluKernel<5><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    case 6:
      CausalConvSiluKernel<6><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    case 7:
      CausalConvSiluKernel<7><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
    default:
      CausalConvSiluKernel<8><<<grid, kBlockThreads, 0, s>>>(x, ldx, T, C, w, bias, state, out, ldo);
      break;
  }
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("CausalConv1dSilu");
  return Status::OK();
}

}  // namespace kimi::gpu
