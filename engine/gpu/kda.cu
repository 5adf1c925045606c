// KDA recurrence (gpu_ops.h). Block (head h, 32 value columns): 32 × ⌈dk/16⌉ threads, thread
// (row group r, column j) holding S[16r .. 16r+15, j] in registers for the whole call. Per token:
//   S ← diag(e^g)·S;  kS_j = Σ_d k_d·S[d, j];  u_j = β·(v_j − kS_j);
//   S ← S + k·uᵀ;  o_j = scale·Σ_d q_d·S[d, j]
// The two column sums over d go through shared memory (each row group's partial, then the
// groups added in order). The state is read once at the start and written once at the end, so
// decode (T = 1) costs one pass over the state; prefill runs the same recurrence token by token
// (the chunked WY form of kda_chunk.h is not ported yet: docs/gpu.md).
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

constexpr int kColumns = 32;  // value columns per block
constexpr int kRowsPerThread = 16;
constexpr int kMaxGroups = kKdaMaxKeyDim / kRowsPerThread;  // 32 → at most 1024 threads

__global__ void __launch_bounds__(kColumns* kMaxGroups) KdaRecurrentKernel(kernels::KdaArgs a) {
  __shared__ float partial_k[kMaxGroups][kColumns];
  __shared__ float partial_q[kMaxGroups][kColumns];
  __shared__ float update[kColumns];
  const int col = threadIdx.x % kColumns, group = threadIdx.x / kColumns;
  const int groups = blockDim.x / kColumns;
  const int64_t h = blockIdx.x;
  const int64_t j = int64_t(blockIdx.y) * kColumns + col;
  const bool live_col = j < a.dv;
  const int64_t d0 = int64_t(group) * kRowsPerThread;
  float* S = a.state + h * a.dk * a.dv;

  float s[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) s[i] = (live_col && d0 + i < a.dk) ? S[(d0 + i) * a.dv + j] : 0.0f;

  for (int64_t t = 0; t < a.T; ++t) {
    const float* q = a.q + t * a.ld_qk + h * a.dk;
    const float* k = a.k + t * a.ld_qk + h * a.dk;
    const float* g = a.g + t * a.ld_qk + h * a.dk;
    // Decay, then this group's part of kᵀS.
    float pk = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      if (d0 + i < a.dk) {
        s[i] *= expf(g[d0 + i]);
        pk += k[d0 + i] * s[i];
      }
    }
    partial_k[group][col] = pk;
    __syncthreads();
    if (group == 0) {
      float kS = 0.0f;
      for (int r = 0; r < groups; ++r) kS += partial_k[r][col];
      const float beta = a.beta[t * a.ld_beta + h];
      update[col] = live_col ? beta * (a.v[t * a.ld_v + h * a.dv + j] - kS) : 0.0f;
    }
    __syncthreads();
    const float u = update[col];
    float pq = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      if (d0 + i < a.dk) {
        s[i] += k[d0 + i] * u;
        pq += q[d0 + i] * s[i];
      }
    }
    partial_q[group][col] = pq;
    __syncthreads();
    if (group == 0 && live_col) {
      float o = 0.0f;
      for (int r = 0; r < groups; ++r) o += partial_q[r][col];
      a.out[t * a.ld_out + h * a.dv + j] = a.scale * o;
    }
  }
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i)
    if (live_col && d0 + i < a.dk) S[(d0 + i) * a.dv + j] = s[i];
}

}  // namespace

Status KdaRecurrent(const kernels::KdaArgs& a, const GpuStream& stream) {
  if (a.H < 1 || a.dk < 1 || a.dv < 1 || a.T < 0) return Status::InvalidArgument("KdaRecurrent: bad shape");
  if (a.dk > kKdaMaxKeyDim) return Status::InvalidArgument("KdaRecurrent: dk exceeds kKdaMaxKeyDim");
  if (a.T == 0) return Status::OK();
  const int groups = static_cast<int>(detail::CeilDiv(a.dk, kRowsPerThread));
  const dim3 grid(static_cast<unsigned>(a.H), static_cast<unsigned>(detail::CeilDiv(a.dv, kColumns)));
  KdaRecurrentKernel<<<grid, kColumns * groups, 0, detail::Native(stream)>>>(a);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaRecurrent");
  return Status::OK();
}

}  // namespace kimi::gpu
