// Reference KDA: the recurrence token by token (the definition), and the chunked form with
// scalar vector operations.
#include <cmath>
#include <vector>

#include "kernels/cpu/kda_chunk.h"
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {
namespace {

struct ScalarOps {
  static constexpr GemmF32Fn Gemm = GemmF32;
  static void Prefetch(const void*, int64_t) {}
  static void CombineRows(float* out, float out_scale, float alpha, const float* coeffs, int64_t coeff_stride,
                          const float* rows, int64_t row_stride, int64_t count, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < count; ++i) acc += coeffs[i * coeff_stride] * rows[i * row_stride + j];
      out[j] = (out_scale == 0.0f ? 0.0f : out_scale * out[j]) + alpha * acc;
    }
  }
  static void Exp(const float* x, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i]);
  }
  // ka, qa, kg and qg at d; returns f = e^{Gt−Gp} there.
  static float DecayedForms(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                            int64_t d, float* ka, float* qa, float* kg, float* qg) {
    const float f = std::exp(Gt[d] - Gp[d]);
    ka[d] = k[d] * f;
    qa[d] = q[d] * f;
    kg[d] = ka[d] * eGp[d];
    qg[d] = qa[d] * eGp[d];
    return f;
  }
  static void DecayRow(const float* k, const float* q, const float* Gt, const float* Gp, const float* Ge,
                       const float* eGp, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kend) {
    for (int64_t d = 0; d < n; ++d) {
      DecayedForms(k, q, Gt, Gp, eGp, d, ka, qa, kg, qg);
      kend[d] = k[d] * std::exp(Ge[d] - Gt[d]);
    }
  }
  static void DecayRowFactored(const float* k, const float* q, const float* Gt, const float* Gp, const float* eGp,
                               const float* eGep, int64_t n, float* ka, float* qa, float* kg, float* qg, float* kx,
                               float* kend) {
    for (int64_t d = 0; d < n; ++d) {
      kx[d] = k[d] / DecayedForms(k, q, Gt, Gp, eGp, d, ka, qa, kg, qg);
      kend[d] = kx[d] * eGep[d];
    }
  }
  static void Transpose(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
  }
  static void DecayedDots(const float* qt, const float* kt, const float* ki, const float* Gt,
                          const float* Gi, int64_t n, float* qk, float* kk) {
    float sq = 0.0f, sk = 0.0f;
    for (int64_t d = 0; d < n; ++d) {
      float decayed = ki[d] * std::exp(Gt[d] - Gi[d]);
      sq += qt[d] * decayed;
      sk += kt[d] * decayed;
    }
    *qk = sq;
    *kk = sk;
  }
};

}  // namespace

void KdaRecurrent(const KdaArgs& a) {
  std::vector<float> kS(a.dv);
  for (int64_t h = 0; h < a.H; ++h) {
    float* S = a.state + h * a.dk * a.dv;
    for (int64_t t = 0; t < a.T; ++t) {
      const float* q = a.q + t * a.ld_qk + h * a.dk;
      const float* k = a.k + t * a.ld_qk + h * a.dk;
      const float* g = a.g + t * a.ld_qk + h * a.dk;
      const float* v = a.v + t * a.ld_v + h * a.dv;
      const float beta = a.beta[t * a.ld_beta + h];
      float* o = a.out + t * a.ld_out + h * a.dv;
      // S ← diag(e^g)·S
      for (int64_t d = 0; d < a.dk; ++d) {
        float decay = std::exp(g[d]);
        for (int64_t j = 0; j < a.dv; ++j) S[d * a.dv + j] *= decay;
      }
      // S ← S + β·k·(v − kᵀS)ᵀ
      for (int64_t j = 0; j < a.dv; ++j) {
        float acc = 0.0f;
        for (int64_t d = 0; d < a.dk; ++d) acc += k[d] * S[d * a.dv + j];
        kS[j] = beta * (v[j] - acc);
      }
      for (int64_t d = 0; d < a.dk; ++d)
        for (int64_t j = 0; j < a.dv; ++j) S[d * a.dv + j] += k[d] * kS[j];
      // o = scale·qᵀS
      for (int64_t j = 0; j < a.dv; ++j) {
        float acc = 0.0f;
        for (int64_t d = 0; d < a.dk; ++d) acc += q[d] * S[d * a.dv + j];
        o[j] = a.scale * acc;
      }
    }
  }
}

void KdaChunked(const KdaArgs& a) { KdaChunkedHeads<ScalarOps>(a); }

}  // namespace kimi::kernels::ref
