// The AVX2+FMA kernels (signatures as in kernel_table.h). Compiled with -mavx2 -mfma; call
// them only when the CPU has both (Avx2Kernels() checks). Thread safety: pure functions.
#pragma once

#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels::avx2 {

void GemvBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy);
// GemvBf16 in two parts (kernel_table.h, prepare_gemv_bf16): the activations rearranged once
// into `prepared` (GemvBf16PreparedFloats floats), then any slice of the weight rows against
// them; each slice gives the bits GemvBf16 gives those rows.
int64_t GemvBf16PreparedFloats(int64_t M, int64_t K);
void PrepareGemvBf16(const float* x, int64_t ldx, int64_t M, int64_t K, float* prepared);
void GemvBf16Prepared(const float* prepared, const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N,
                      int64_t K, float* y, int64_t ldy);
void GemmBf16(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy);
// The prefill GEMM on BF16 dot products (matmul_bf16_dot_avx512.cc): ref::MatmulBf16Dot up to
// the order of its fp32 sums. GemmBf16Dot512 needs cpu::HasAvx512Bf16(), GemmBf16Amx
// cpu::HasAmxBf16() (core/cpu_features.h).
void GemmBf16Dot512(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                    int64_t ldy);
void GemmBf16Amx(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K, float* y,
                 int64_t ldy);
// GemmBf16Amx's code on a scalar model of the tile instructions (amx_tile_model.h) instead of
// the instructions: for tests, on any CPU with AVX512-BF16; no kernel table holds it.
void GemmBf16AmxOnTileModel(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                            float* y, int64_t ldy);
// The activations of those two GEMMs: each value x as two BF16 values, hi = bf16(x) and
// lo = bf16(x − hi) (round to nearest even), in rows of 2·Kp values (Kp even, Kp >= K):
//   kPairsInterleaved (GemmBf16Dot512): for each pair of k, the hi pair then the lo pair;
//   kHalvesSideBySide (GemmBf16Amx): the Kp hi values, then the Kp lo values.
// xb: Mp rows (Mp >= M) ldxb apart; zeros past row M and past column K. Needs
// cpu::HasAvx512Bf16().
enum class SplitLayout { kPairsInterleaved, kHalvesSideBySide };
void SplitBf16Activations(const float* x, int64_t ldx, int64_t M, int64_t K, int64_t Mp, int64_t Kp,
                          SplitLayout layout, uint16_t* xb, int64_t ldxb);
// GemvBf16's form for several activation rows (M > 1) in 256-bit registers, and in 512-bit
// ones (call only where cpu::HasAvx512F(), core/cpu_features.h); GemvBf16 takes the 512-bit form
// where the CPU has AVX-512F. Both give each row bit for bit what GemvBf16 gives it alone.
void GemvBf16Batch256(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                      float* y, int64_t ldy);
void GemvBf16Batch512(const float* x, int64_t ldx, const uint16_t* w, int64_t M, int64_t N, int64_t K,
                      float* y, int64_t ldy);
// Activations kept fp32 (exact up to fp32 accumulation); slower than GemvMxfp4Q16.
void GemvMxfp4F32(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
               int64_t M, int64_t N, int64_t K, float* y, int64_t ldy);
// Activations quantised to int16 per block of 32 (error bound in matmul_mxfp4_avx2.cc).
void GemvMxfp4Q16(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
                 int64_t M, int64_t N, int64_t K, float* y, int64_t ldy);
// GemvMxfp4Q16 in 256-bit registers, and in 512-bit ones (call only where cpu::HasAvx512Vnni(),
// core/cpu_features.h); GemvMxfp4Q16 takes the 512-bit form where the CPU has them. Both
// give the same bits.
void GemvMxfp4Q16Form256(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                         int64_t N, int64_t K, float* y, int64_t ldy);
void GemvMxfp4Q16Form512(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale, int64_t M,
                         int64_t N, int64_t K, float* y, int64_t ldy);
void GemmMxfp4(const float* x, int64_t ldx, const uint8_t* w_packed, const uint8_t* w_scale,
               int64_t M, int64_t N, int64_t K, float* y, int64_t ldy);
// 12×32 tiles in 512-bit registers where GemmRegisterWidth() is 512, else 6×16 in 256-bit ones;
// B read in place (the products it serves are small enough to sit in L1/L2 unpacked).
void GemmF32(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t ldb, int64_t M, int64_t N,
             int64_t K, float alpha, float beta, const float* c_row_scale, float* c, int64_t ldc);
// Int8 weights (kernel_table.h, MatmulInt8Fn), activations kept fp32: the GEMV streams each
// weight row once for up to 4 activation rows; the GEMM packs scaled fp32 panels for BlockedGemm.
void GemvInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
              float* y, int64_t ldy);
// GemvInt8 in 256-bit registers, and in 512-bit ones (call only where cpu::HasAvx512F(),
// core/cpu_features.h); GemvInt8 takes the 512-bit form where the CPU has AVX-512F.
void GemvInt8Form256(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N,
                     int64_t K, float* y, int64_t ldy);
void GemvInt8Form512(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N,
                     int64_t K, float* y, int64_t ldy);
void GemmInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
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
// KdaChunked's element-wise steps in 256-bit registers, and in 512-bit ones (kda_avx512.cc; call
// only where cpu::HasAvx512F(), core/cpu_features.h); KdaChunked takes the 512-bit form where the
// CPU has AVX-512F. Both give the same bits.
void KdaChunkedForm256(const KdaArgs& a);
void KdaChunkedForm512(const KdaArgs& a);
void KdaGate(const float* f, const float* A_log, const float* dt_bias, int64_t T, int64_t H,
             int64_t dk, float lower_bound, float* g);
void MlaAbsorbed(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                 int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                 int64_t ld_out);
// MlaAbsorbed's two forms (mla_avx2.cc): a cache walk per query with dot products, and GemmF32
// products per head and block of 64 queries; MlaAbsorbed takes the products from
// kMlaMinProductQueries queries on (kimi-bench-kernels --only mla: at 256 cached tokens and 16
// heads the products are 0.9x the walk at 2 queries, 1.1x at 4, 2x at 8, 3x at 16 and more).
inline constexpr int64_t kMlaMinProductQueries = 8;
void MlaAbsorbedPerQuery(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                         int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                         int64_t ld_out);
void MlaAbsorbedProducts(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                         int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                         int64_t ld_out);
// Bit-exact: its file is compiled with -ffp-contract=off (kernels.h, HeadsTransposedBf16).
void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         int64_t ldy);
void TopKRoute(const float* logits, const float* bias, int64_t E, int top_k, bool renormalize,
               float scaling, int32_t* ids, float* weights);

}  // namespace kimi::kernels::avx2
