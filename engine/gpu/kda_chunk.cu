// Chunked KDA prefill (gpu_ops.h KdaChunked): the WY/UT form of kernels/cpu/kda_chunk.h (read
// its header comment for the algebra) in chunks of kKdaChunkTokens, in four launches:
//   1. Prepare  (chunk, head):    G = Σ_{s<=t} g_s within the chunk, Kg = e^G⊙k, Qg = e^G⊙q,
//                                 Kd_i = e^{G[C−1]−G[i]}⊙k_i, last = e^{G[C−1]};
//   2. Pairs    (chunk, head, t): A[t,i] = Σ_d k_t k_i e^{G[t]−G[i]} (i < t), B[t,i] likewise
//                                 with q_t (i <= t), a warp per i;
//   3. Invert   (chunk, head):    T = (I + diag(β)·A)⁻¹·diag(β), so the new values are
//                                 w = T·(v − S0ᵀKg) (the forward substitution of the CPU form
//                                 done once per chunk, independent of the value columns);
//   4. Scan     (head, 32 value columns): the one sequential part, chunk after chunk with the
//                                 state tile in shared memory: w, the outputs
//                                 o = scale·(S0ᵀQg + B·w) and S ← diag(last)·S + Kdᵀ·w.
// Launches 1–3 run every chunk of every head at once; the scan has three barriers per chunk
// where the recurrence (kda.cu) has three per token. Scratch (caller's, device memory):
// KdaChunkedScratchFloats(T, H, dk) floats, per (head, chunk) the block described by Layout.
#include "gpu/device_common.cuh"
#include "gpu/gpu_ops.h"

namespace kimi::gpu {
namespace {

constexpr int kC = static_cast<int>(kKdaChunkTokens);
constexpr int kScanColumns = 32;
constexpr int kScanGroups = 8;  // 256 threads: 8 groups of 32 columns
constexpr int kScanMaxDk = static_cast<int>(kKdaChunkMaxKeyDim);
constexpr int kTokensPerGroup = kC / kScanGroups;

// One (head, chunk) block of the scratch, in floats.
struct Layout {
  int64_t dk;
  __host__ __device__ int64_t G() const { return 0; }
  __host__ __device__ int64_t Kg() const { return kC * dk; }
  __host__ __device__ int64_t Qg() const { return 2 * kC * dk; }
  __host__ __device__ int64_t Kd() const { return 3 * kC * dk; }
  __host__ __device__ int64_t Last() const { return 4 * kC * dk; }
  __host__ __device__ int64_t T() const { return 4 * kC * dk + dk; }  // A, then T in place
  __host__ __device__ int64_t B() const { return T() + kC * kC; }
  __host__ __device__ int64_t Size() const { return B() + kC * kC; }
};

struct Chunk {
  int64_t t0, len;  // first token, tokens in this chunk (the last one may be short)
  float* block;     // its scratch block
};

__device__ Chunk ChunkOf(const kernels::KdaArgs& a, float* scratch, int64_t c, int64_t h) {
  const Layout L{a.dk};
  const int64_t chunks = (a.T + kC - 1) / kC;
  const int64_t t0 = c * kC;
  return Chunk{t0, a.T - t0 < kC ? a.T - t0 : kC, scratch + (h * chunks + c) * L.Size()};
}

__global__ void PrepareKernel(kernels::KdaArgs a, float* scratch) {
  const int64_t h = blockIdx.y;
  const Chunk ch = ChunkOf(a, scratch, blockIdx.x, h);
  const Layout L{a.dk};
  float *G = ch.block + L.G(), *Kg = ch.block + L.Kg(), *Qg = ch.block + L.Qg(), *Kd = ch.block + L.Kd();
  for (int64_t d = threadIdx.x; d < a.dk; d += blockDim.x) {
    float acc = 0.0f, e = 1.0f;
    for (int64_t t = 0; t < ch.len; ++t) {
      const int64_t at = (ch.t0 + t) * a.ld_qk + h * a.dk + d;
      acc += a.g[at];
      e = expf(acc);
      G[t * a.dk + d] = acc;
      Kg[t * a.dk + d] = a.k[at] * e;
      Qg[t * a.dk + d] = a.q[at] * e;
    }
    ch.block[L.Last() + d] = e;
    for (int64_t i = 0; i < ch.len; ++i)
      Kd[i * a.dk + d] = a.k[(ch.t0 + i) * a.ld_qk + h * a.dk + d] * expf(acc - G[i * a.dk + d]);
  }
}

__global__ void PairsKernel(kernels::KdaArgs a, float* scratch) {
  const int64_t h = blockIdx.y, t = blockIdx.z;
  const Chunk ch = ChunkOf(a, scratch, blockIdx.x, h);
  if (t >= ch.len) return;
  const Layout L{a.dk};
  const float* G = ch.block + L.G();
  float *A = ch.block + L.T(), *B = ch.block + L.B();
  const int lane = threadIdx.x % KIMI_WARP_SIZE, warp = threadIdx.x / KIMI_WARP_SIZE;
  const int warps = blockDim.x / KIMI_WARP_SIZE;
  const float* qt = a.q + (ch.t0 + t) * a.ld_qk + h * a.dk;
  const float* kt = a.k + (ch.t0 + t) * a.ld_qk + h * a.dk;
  for (int64_t i = warp; i < kC; i += warps) {
    float qk = 0.0f, kk = 0.0f;
    if (i <= t) {
      const float* ki = a.k + (ch.t0 + i) * a.ld_qk + h * a.dk;
      for (int64_t d = lane; d < a.dk; d += KIMI_WARP_SIZE) {
        const float e = expf(G[t * a.dk + d] - G[i * a.dk + d]);
        qk += qt[d] * ki[d] * e;
        kk += kt[d] * ki[d] * e;
      }
      qk = detail::WarpSum(qk);
      kk = detail::WarpSum(kk);
    }
    if (lane == 0) {
      B[t * kC + i] = i <= t ? qk : 0.0f;
      A[t * kC + i] = i < t ? kk : 0.0f;
    }
  }
}

// Thread c solves column c of X = (I + diag(β)·A)⁻¹ by forward substitution; T = X·diag(β).
__global__ void __launch_bounds__(kC) InvertKernel(kernels::KdaArgs a, float* scratch) {
  __shared__ float X[kC][kC + 1];
  const int64_t h = blockIdx.y;
  const Chunk ch = ChunkOf(a, scratch, blockIdx.x, h);
  const Layout L{a.dk};
  float* A = ch.block + L.T();
  const int c = threadIdx.x;
  for (int t = 0; t < kC; ++t) {
    float x = t == c ? 1.0f : 0.0f;
    if (t > c && t < ch.len) {
      float sum = 0.0f;
      for (int i = c; i < t; ++i) sum += A[t * kC + i] * X[i][c];
      x = -a.beta[(ch.t0 + t) * a.ld_beta + h] * sum;
    }
    X[t][c] = x;
  }
  __syncthreads();  // every column read A; now A's slot takes T
  const float beta_c = c < ch.len ? a.beta[(ch.t0 + c) * a.ld_beta + h] : 0.0f;
  for (int t = 0; t < kC; ++t) A[t * kC + c] = X[t][c] * beta_c;
}

__global__ void __launch_bounds__(kScanColumns* kScanGroups) ScanKernel(kernels::KdaArgs a, float* scratch) {
  __shared__ float S[kScanMaxDk][kScanColumns];
  __shared__ float R[kC][kScanColumns];  // right-hand sides v − S0ᵀKg
  __shared__ float W[kC][kScanColumns];  // new values
  const int col = threadIdx.x % kScanColumns, group = threadIdx.x / kScanColumns;
  const int64_t h = blockIdx.x;
  const int64_t j = int64_t(blockIdx.y) * kScanColumns + col;
  const bool live = j < a.dv;
  const Layout L{a.dk};
  float* state = a.state + h * a.dk * a.dv;
  for (int64_t d = group; d < a.dk; d += kScanGroups) S[d][col] = live ? state[d * a.dv + j] : 0.0f;

  const int64_t chunks = (a.T + kC - 1) / kC;
  for (int64_t c = 0; c < chunks; ++c) {
    const Chunk ch = ChunkOf(a, scratch, c, h);
    const float *Kg = ch.block + L.Kg(), *Qg = ch.block + L.Qg(), *Kd = ch.block + L.Kd();
    const float *T = ch.block + L.T(), *B = ch.block + L.B(), *last = ch.block + L.Last();
    __syncthreads();  // S holds the state entering this chunk
    float inter[kTokensPerGroup];
#pragma unroll
    for (int m = 0; m < kTokensPerGroup; ++m) {
      const int64_t t = group + kScanGroups * m;
      float rk = 0.0f, rq = 0.0f;
      if (t < ch.len) {
        for (int64_t d = 0; d < a.dk; ++d) {
          const float s = S[d][col];
          rk += Kg[t * a.dk + d] * s;
          rq += Qg[t * a.dk + d] * s;
        }
      }
      inter[m] = rq;
      R[t][col] = (live && t < ch.len) ? a.v[(ch.t0 + t) * a.ld_v + h * a.dv + j] - rk : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kTokensPerGroup; ++m) {
      const int64_t t = group + kScanGroups * m;
      float w = 0.0f;
      for (int64_t i = 0; i <= t && i < ch.len; ++i) w += T[t * kC + i] * R[i][col];
      W[t][col] = t < ch.len ? w : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kTokensPerGroup; ++m) {
      const int64_t t = group + kScanGroups * m;
      if (!live || t >= ch.len) continue;
      float o = inter[m];
      for (int64_t i = 0; i <= t; ++i) o += B[t * kC + i] * W[i][col];
      a.out[(ch.t0 + t) * a.ld_out + h * a.dv + j] = a.scale * o;
    }
    for (int64_t d = group; d < a.dk; d += kScanGroups) {
      float s = last[d] * S[d][col];
      for (int64_t i = 0; i < ch.len; ++i) s += Kd[i * a.dk + d] * W[i][col];
      S[d][col] = s;
    }
  }
  __syncthreads();
  if (live)
    for (int64_t d = group; d < a.dk; d += kScanGroups) state[d * a.dv + j] = S[d][col];
}

}  // namespace

int64_t KdaChunkedScratchFloats(int64_t T, int64_t H, int64_t dk) {
  return H * ((T + kC - 1) / kC) * Layout{dk}.Size();
}

Status KdaChunked(const kernels::KdaArgs& a, float* scratch, const GpuStream& stream) {
  if (a.H < 1 || a.dk < 1 || a.dv < 1 || a.T < 0) return Status::InvalidArgument("KdaChunked: bad shape");
  if (a.dk > kKdaChunkMaxKeyDim) return Status::InvalidArgument("KdaChunked: dk exceeds kKdaChunkMaxKeyDim");
  if (a.T == 0) return Status::OK();
  const unsigned chunks = static_cast<unsigned>(detail::CeilDiv(a.T, kC)), heads = static_cast<unsigned>(a.H);
  const gpuStream_t s = detail::Native(stream);
  PrepareKernel<<<dim3(chunks, heads), 128, 0, s>>>(a, scratch);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaChunked prepare");
  PairsKernel<<<dim3(chunks, heads, kC), detail::kBlockThreads, 0, s>>>(a, scratch);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaChunked pairs");
  InvertKernel<<<dim3(chunks, heads), kC, 0, s>>>(a, scratch);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaChunked invert");
  const dim3 scan(heads, static_cast<unsigned>(detail::CeilDiv(a.dv, kScanColumns)));
  ScanKernel<<<scan, kScanColumns * kScanGroups, 0, s>>>(a, scratch);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("KdaChunked scan");
  return Status::OK();
}

}  // namespace kimi::gpu
