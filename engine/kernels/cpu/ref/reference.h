// The scalar reference kernels: plain loops that define each op (see kernel_table.h for the
// signatures). Used as the fallback table and as the truth in every kernel test.
// Thread safety: pure functions of their arguments.
#pragma once

#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels::ref {

void MatmulBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy);
// The BF16 dot-product tables' prefill GEMM: each activation split into two BF16 values
// (hi = bf16(x), lo = bf16(x − hi)), exact products, fp32 sums.
void MatmulBf16Dot(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                   int64_t ldy);
void MatmulMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy);
void GemmF32(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M, int64_t N,
             int64_t K, float alpha, float beta, const float* c_row_scale, float* c, int64_t ldc);
void MatmulInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy);
void RmsNorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out);
void Situ(const float* gate, const float* up, int64_t n, float beta, float beta_lin, float* out);
void Silu(const float* x, int64_t n, float* out);
void Sigmoid(const float* x, int64_t n, float* out);
void MulSigmoid(const float* x, const float* gate, int64_t n, float* out);
void Softmax(const float* x, int64_t rows, int64_t n, float* out);
void L2Normalize(const float* x, int64_t rows, int64_t dim, float eps, float scale, float* out);
void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, int64_t ld_state, float* out,
                      int64_t ldo);
void KdaRecurrent(const KdaArgs& a);
void KdaChunked(const KdaArgs& a);
void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g);
void MlaAbsorbed(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                 int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                 int64_t ld_out);
// Bit-exact: its file is compiled with -ffp-contract=off (kernels.h, HeadsTransposedBf16).
void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         int64_t ldy);
void TopKRoute(const float* logits, const float* bias, int64_t E, int top_k, bool renormalize,
               float scaling, int32_t* ids, float* weights);

}  // namespace kimi::kernels::ref
