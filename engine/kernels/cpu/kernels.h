// CPU kernels of the Kimi K3 forward pass: the entry points the model code calls.
//
// Every function here dispatches at run time to the fastest implementation the CPU supports
// (AVX2+FMA where present) and falls back to the plain scalar reference
// (kernel_table.h lists them; docs/kernels.md explains the choices). Each function splits its
// work over `pool` (rows, heads or channels); pool == nullptr runs on the calling thread.
//
// Conventions:
//   * Activations are fp32. Matrices are row-major; `ld*` is the distance in elements
//     between consecutive rows (ld >= the row length). Weights follow the checkpoint layout
//     [out, in] (PyTorch nn.Linear), so every product is y = W·x per activation row.
//   * BF16 values are raw uint16_t bits; MXFP4 weights are `weight_packed` uint8 [out, in/2]
//     (low nibble = even element) and `weight_scale` uint8 E8M0 [out, in/32] (kimi/dtype.h).
//   * Outputs never alias inputs unless a function says in-place is allowed.
//   * The entry points assert() their shape preconditions in debug builds only (hot loops).
//
// Thread safety: every function is reentrant; distinct calls may run concurrently on
// distinct output buffers (a shared pool serialises its own parallel regions).
#pragma once

#include <cstdint>
#include <span>

namespace kimi {
class ThreadPool;
}

namespace kimi::kernels {

// ---- Dense products -------------------------------------------------------------------

// Y[m, n] = Σ_k X[m, k] · W[n, k] with W in BF16.
//   x: [M, K] fp32 (row stride ldx)   w: [N, K] bf16, contiguous rows   y: [M, N] (row stride ldy)
// Small M (decode batches: M <= 4, or M <= 16 with M·K <= 65536) streams each weight row
// once for all M vectors; larger M (prefill) uses a blocked, register-tiled product with W
// converted to fp32 per block.
// Precondition: M, N, K >= 1.
void MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy, ThreadPool* pool);

// One product of a batch for MatmulBf16Batch: y[M, N] = x[M, K] · W[N, K]ᵀ.
struct Bf16Product {
  const float* x;
  int64_t ldx;
  const uint16_t* w;
  int64_t N, K;
  float* y;
  int64_t ldy;
};

// Several BF16 products with the same number of activation rows M in one parallel region: the
// output rows of all of them, taken end to end, are split over the threads, so a decode step
// synchronises once instead of once per (often small) matrix. Each output equals what
// MatmulBf16 gives for its product, bit for bit.
// Precondition: as for MatmulBf16, per product; outputs do not overlap inputs or each other.
void MatmulBf16Batch(std::span<const Bf16Product> products, int64_t M, ThreadPool* pool);

// The same with MXFP4 weights: packed [N, K/2], scales [N, K/32]. The streaming path also
// takes M <= 32 when K <= 512 (an expert's rows in prefill or a wide decode batch).
// On the streaming path the AVX2 code quantises x to int16 per block of 32 (scale
// max|x|/32767, multiplied with the weights as int16 by vpmaddwd); the added error per output
// is at most Σ_blocks (max|x_b|/65534)·Σ_{i∈b}|w_i| (relative ~2e-5).
// Precondition: K % 32 == 0.
void MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy, ThreadPool* pool);

// The same with int8 weights per output channel (compressed-tensors pack-quantized, 8 bits):
// w [N, K] holds q + 128 per byte and row n of W is w_scale[n] · (q[n, :]), so
// Y[m, n] = w_scale[n] · Σ_k X[m, k] · q[n, k]. Activations stay fp32. Small M streams each
// weight row once (as MatmulBf16's GEMV); larger M the blocked GEMM.
// Precondition: M, N, K >= 1.
void MatmulInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy, ThreadPool* pool);

// ---- Element-wise and row-wise ops (in-place allowed: out may equal the input) -----------

// out[r, :] = x[r, :] · rsqrt(mean(x[r, :]²) + eps) · weight[:].   x, out: [rows, dim] contiguous.
void RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out,
             ThreadPool* pool);

// SiTU gated activation of K3's MLPs: a = β·tanh(g/β)·sigmoid(g); u' = β_lin·tanh(u/β_lin);
// out = a·u'. gate, up, out: [n]. (β = 4, β_lin = 25 in the published config.)
void Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out,
          ThreadPool* pool);

// out = x·sigmoid(x), out = 1/(1+e^-x): [n].
void Silu(const float* x, int64_t n, float* out, ThreadPool* pool);
void Sigmoid(const float* x, int64_t n, float* out, ThreadPool* pool);

// out = x·sigmoid(gate): [n]. The output gates of KDA (after o_norm) and of gated MLA.
void MulSigmoid(const float* x, const float* gate, int64_t n, float* out, ThreadPool* pool);

// Row-wise softmax, max-subtracted. x, out: [rows, n] contiguous.
void Softmax(const float* x, int64_t rows, int64_t n, float* out, ThreadPool* pool);

// out[r, :] = x[r, :] · rsqrt(Σ x[r, :]² + eps) · scale  (KDA's q/k norm, eps 1e-6; q also
// takes scale = head_dim^-0.5). x, out: [rows, dim] contiguous.
void L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out,
                 ThreadPool* pool);

// ---- Short causal convolution (KDA's q/k/v ShortConvolution) -----------------------------

// Depthwise causal conv of width `width` over T tokens, then SiLU:
//   out[t, c] = silu(bias[c] + Σ_j w[c, j] · xin[t − (width−1) + j, c]),
// where tokens before t = 0 come from `state`. State layout: [width−1, C], oldest token first
// (state[width−2, :] is the most recent input); on return it holds the last width−1 inputs
// (from x and, when T < width−1, the old state). Decode is T = 1.
//   x: [T, C] (row stride ldx)  w: [C, width] (the checkpoint's conv1d weight [C, 1, width])
//   bias: [C] or nullptr        out: [T, C] (row stride ldo); out must not alias x.
// Precondition: 2 <= width <= 8.
void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, float* out, int64_t ldo,
                      ThreadPool* pool);

// ---- Kimi Delta Attention ---------------------------------------------------------------

// Tensors of one KDA call: T tokens × H heads. Per head h and token t:
//   S ← diag(exp g[t,h,:])·S;  S ← S + β[t,h]·k·(v − kᵀS)ᵀ;  o[t,h,:] = scale·qᵀS
// with S the head's state [dk, dv] (row d = key dimension d), fp32, row-major.
// g is the log forget gate (<= 0; K3: lb·sigmoid(...), see KdaGate), β in (0, 1).
// q, k are expected L2-normalised (L2Normalize) by the caller.
struct KdaArgs {
  const float* q;     // [T, H, dk] at q + t*ld_qk + h*dk
  const float* k;     // [T, H, dk] same strides as q
  const float* v;     // [T, H, dv] at v + t*ld_v + h*dv
  const float* g;     // [T, H, dk] same strides as q
  const float* beta;  // [T, H]     at beta + t*ld_beta + h
  int64_t T, H, dk, dv;
  int64_t ld_qk, ld_v, ld_beta;
  float scale;        // applied to q (K3: dk^-0.5 when not folded into L2Normalize)
  float* state;       // [H, dk, dv] in: initial state, out: state after token T−1
  float* out;         // [T, H, dv] at out + t*ld_out + h*dv
  int64_t ld_out;
};

// The heads [h0, h1) of a call: the same tokens, pointers moved to head h0, H = h1 - h0.
KdaArgs SliceKdaHeads(const KdaArgs& a, int64_t h0, int64_t h1);

// Token-by-token recurrence (decode; also the readable definition).
void KdaRecurrent(const KdaArgs& a, ThreadPool* pool);
// Chunked prefill (chunks of kKdaChunk, WY/UT form); the same result as KdaRecurrent up to rounding.
void KdaChunked(const KdaArgs& a, ThreadPool* pool);

// K3's log forget gate: g[t, h, d] = lower_bound · sigmoid(exp(A_log[h]) · (f[t, h, d] + dt_bias[h, d])).
//   f, g: [T, H*dk] contiguous; A_log: [H]; dt_bias: [H*dk].
void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g, ThreadPool* pool);

// ---- Multi-head latent attention, absorbed form -------------------------------------------

// Latent cache of one sequence, paged: token t lives in page block_table[t / page_size], slot
// t % page_size; each page holds page_size rows of [c_kv (kv_rank) | k_pe (rope_dim)] fp32,
// i.e. a page is page_size*(kv_rank+rope_dim) floats starting at pool + page_id*that.
struct MlaPagedCache {
  const float* pool;
  const int32_t* block_table;
  int64_t page_size;
  int64_t kv_rank;   // 512 in K3
  int64_t rope_dim;  // 64 in K3
};

// Absorbed attention for nq query rows of one sequence (decode: nq = 1) over H heads.
// Query j sits at position q_pos0 + j and attends cache tokens 0..q_pos0+j (causal):
//   score[t] = (q_latent[j,h,:]·c_kv[t] + q_pe[j,h,:]·k_pe[t]) · scale,  p = softmax(score),
//   out_latent[j,h,:] = Σ_t p[t]·c_kv[t].
// q_latent = W_UKᵀ·q_nope per head (caller), and out_latent goes through W_UV (caller).
//   q_latent: [nq, H, kv_rank]  q_pe: [nq, H, rope_dim]  out_latent: [nq, H, kv_rank], contiguous.
// Precondition: the cache holds tokens 0..q_pos0+nq−1.
void MlaAbsorbedAttention(const float* q_latent, const float* q_pe, int64_t nq, int64_t H,
                          int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                          ThreadPool* pool);

// The transposed product of per-head BF16 blocks that absorbs W_UK into the MLA query:
//   for every row m and head h:  y[m, h, :] = Σ_n x[m, h, n] · W_h[n, :]
// where W_h = w + h*w_head_stride is [n_in, n_out] row-major; x[m, h, :] starts at
// x + m*ldx + h*x_head_stride; y: [M, H, n_out] contiguous. Split over heads.
// Every output element is 0 plus its products x·w added one at a time in n order, each product
// rounded to fp32 before the add (no fused multiply-add): the optimised kernel and the
// reference give the same bits, and a row's result does not depend on the rows beside it.
// Precondition: M >= 0, H, n_in, n_out >= 1; y does not overlap x or w.
void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         ThreadPool* pool);

// ---- MoE routing -----------------------------------------------------------------------

// For each of T tokens: s = sigmoid(logits[t, :]); pick the top_k experts by s + bias (ties:
// lower expert index first); weights = s at those experts, divided by their sum when
// renormalize, times scaling. ids, weights: [T, top_k], ordered by decreasing s + bias.
//   logits: [T, E]  bias: [E] or nullptr.   Precondition: 1 <= top_k <= E.
void TopKRoute(const float* logits, const float* bias, int64_t T, int64_t E, int top_k,
               bool renormalize, float scaling, int32_t* ids, float* weights, ThreadPool* pool);

// ---- Introspection ------------------------------------------------------------------------

// "scalar", "avx2", "avx512bf16" or "amx": the kernel table the entry points above use in this
// process (kernel_table.h, ActiveKernels).
const char* ActiveIsa();

}  // namespace kimi::kernels
