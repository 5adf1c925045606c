// Element-wise and row-wise kernels (gpu_ops.h): one thread per element with a grid-stride
// loop, or one block per row with block-wide sums for the norms and the softmax. Sums are fp32
// (the reference's are double: see the tolerances in gpu_ops_test.cc). expf/tanhf are the
// accurate library versions; the build does not use fast math.
#include <algorithm>

#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

using detail::BlockMax;
using detail::BlockSum;
using detail::CeilDiv;
using detail::kBlockThreads;
using detail::Native;
using detail::SigmoidOf;

constexpr int kMaxWarps = kBlockThreads / KIMI_WARP_SIZE;

using detail::ElementGrid;

__global__ void SituKernel(const float* gate, const float* up, int64_t n, float beta, float beta_lin,
                           float* out) {
  KIMI_GRID_STRIDE_LOOP(i, n) {
    const float g = gate[i];
    const float a = beta * tanhf(g / beta) * SigmoidOf(g);
    // No linear β (+inf): the up factor passes unchanged, as in model::SituMlpForward.
    const float u = isinf(beta_lin) ? up[i] : beta_lin * tanhf(up[i] / beta_lin);
    out[i] = a * u;
  }
}

__global__ void SiluKernel(const float* x, int64_t n, float* out) {
  KIMI_GRID_STRIDE_LOOP(i, n) out[i] = x[i] * SigmoidOf(x[i]);
}

__global__ void SigmoidKernel(const float* x, int64_t n, float* out) {
  KIMI_GRID_STRIDE_LOOP(i, n) out[i] = SigmoidOf(x[i]);
}

__global__ void MulSigmoidKernel(const float* x, const float* gate, int64_t n, float* out) {
  KIMI_GRID_STRIDE_LOOP(i, n) out[i] = x[i] * SigmoidOf(gate[i]);
}

__global__ void KdaGateKernel(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
                              int64_t dk, float lower_bound, float* g) {
  KIMI_GRID_STRIDE_LOOP(i, T * H * dk) {
    const int64_t hd = i % (H * dk), h = hd / dk;
    g[i] = lower_bound * SigmoidOf(expf(A_log[h]) * (f[i] + dt_bias[hd]));
  }
}

// One block per row, scaled by a factor of the row's Σx²:
//   RMSNorm (kRms): out = x·(1/√(Σx²/dim + eps))·weight;  L2: out = x·scale/√(Σx² + eps).
template <bool kRms>
__global__ void __launch_bounds__(kBlockThreads)
    RowNormKernel(const float* x, const float* weight, int64_t dim, float eps, float scale, float* out) {
  __shared__ float scratch[kMaxWarps];
  const float* xr = x + int64_t(blockIdx.x) * dim;
  float* o = out + int64_t(blockIdx.x) * dim;
  float sum_sq = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) sum_sq += xr[i] * xr[i];
  sum_sq = BlockSum(sum_sq, scratch);
  const float factor = kRms ? 1.0f / sqrtf(sum_sq / float(dim) + eps) : scale / sqrtf(sum_sq + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    o[i] = kRms ? xr[i] * factor * weight[i] : xr[i] * factor;
}

// One block per row, max-subtracted.
__global__ void __launch_bounds__(kBlockThreads) SoftmaxKernel(const float* x, int64_t n, float* out) {
  __shared__ float scratch[kMaxWarps];
  const float* xr = x + int64_t(blockIdx.x) * n;
  float* o = out + int64_t(blockIdx.x) * n;
  float mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = fmaxf(mx, xr[i]);
  mx = BlockMax(mx, scratch);
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = expf(xr[i] - mx);
    o[i] = e;
    sum += e;
  }
  const float inv = 1.0f / BlockSum(sum, scratch);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) o[i] *= inv;
}

Status CheckRows(int64_t rows, int64_t dim, const char* op) {
  if (rows < 0 || dim < 1)
    return Status::InvalidArgument(std::string(op) + ": rows >= 0 and dim >= 1 required");
  if (rows > 0x7fffffff) return Status::InvalidArgument(std::string(op) + ": too many rows for one launch");
  return Status::OK();
}

}  // namespace

Status RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out,
               const GpuStream& stream) {
  KIMI_RETURN_IF_ERROR(CheckRows(rows, dim, "RmsNorm"));
  if (rows == 0) return Status::OK();
  RowNormKernel<true>
      <<<static_cast<unsigned>(rows), kBlockThreads, 0, Native(stream)>>>(x, weight, dim, eps, 1.0f, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("RmsNorm");
  return Status::OK();
}

Status L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out,
                   const GpuStream& stream) {
  KIMI_RETURN_IF_ERROR(CheckRows(rows, dim, "L2Normalize"));
  if (rows == 0) return Status::OK();
  RowNormKernel<false>
      <<<static_cast<unsigned>(rows), kBlockThreads, 0, Native(stream)>>>(x, nullptr, dim, eps, scale, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("L2Normalize");
  return Status::OK();
}

Status Softmax(const float* x, int64_t rows, int64_t n, float* out, const GpuStream& stream) {
  KIMI_RETURN_IF_ERROR(CheckRows(rows, n, "Softmax"));
  if (rows == 0) return Status::OK();
  SoftmaxKernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, Native(stream)>>>(x, n, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("Softmax");
  return Status::OK();
}

Status Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out,
            const GpuStream& stream) {
  if (n <= 0) return Status::OK();
  SituKernel<<<ElementGrid(n), kBlockThreads, 0, Native(stream)>>>(gate, up, n, beta, beta_lin, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("Situ");
  return Status::OK();
}

Status Silu(const float* x, int64_t n, float* out, const GpuStream& stream) {
  if (n <= 0) return Status::OK();
  SiluKernel<<<ElementGrid(n), kBlockThreads, 0, Native(stream)>>>(x, n, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("Silu");
  return Status::OK();
}

Status Sigmoid(const float* x, int64_t n, float* out, const GpuStream& stream) {
  if (n <= 0) return Status::OK();
  SigmoidKernel<<<ElementGrid(n), kBlockThreads, 0, Native(stream)>>>(x, n, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("Sigmoid");
  return Status::OK();
}

Status MulSigmoid(const float* x, const float* gate, int64_t n, float* out, const GpuStream& stream) {
  if (n <= 0) return Status::OK();
  MulSigmoidKernel<<<ElementGrid(n), kBlockThreads, 0, Native(stream)>>>(x, gate, n, out);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("MulSigmoid");
  return Status::OK();
}

Status KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H, int64_t dk,
               float lower_bound, float* g, const GpuStream& stream) {
  if (T <= 0 || H <= 0 || dk <= 0) return Status::OK();
  KdaGateKernel<<<ElementGrid(T * H * dk), kBlockThreads, 0, Native(stream)>>>(f, A_log, dt_bias, T, H, dk,
                                                                               lower_bound, g);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaGate");
  return Status::OK();
}

}  // namespace kimi::gpu
