// The chunked (WY/UT) form of KDA for one head, written once and instantiated with a vector
// back end: ScalarOps in ref/kda_ref.cc (the reference) and Avx2Ops in avx2/kda_avx2.cc.
//
// Within a chunk of C tokens, with G[t] = Σ_{s<=t} g[s] (per key dimension, inside the
// chunk) and S0 the state entering the chunk, the recurrence unrolls to
//   S_t = diag(e^{G[t]})·S0 + Σ_{i<=t} diag(e^{G[t]−G[i]})·k_i·w_iᵀ
// where the "new values" w solve the unit-lower-triangular system (the UT transform)
//   w_t + β_t Σ_{i<t} A[t,i]·w_i = β_t·(v_t − S0ᵀ(e^{G[t]}⊙k_t)),
//   A[t,i] = Σ_d k_t[d]·k_i[d]·e^{G[t,d]−G[i,d]},
// solved by forward substitution. Then
//   o_t = scale·(S0ᵀ(e^{G[t]}⊙q_t) + Σ_{i<=t} B[t,i]·w_i),  B[t,i] = Σ_d q_t[d]k_i[d]e^{G[t,d]−G[i,d]},
//   S_C = diag(e^{G[C−1]})·S0 + Σ_i (e^{G[C−1]−G[i]}⊙k_i)·w_iᵀ.
// Every exponent is of a difference G[t]−G[i] with t >= i, so it is <= 0: nothing overflows,
// whatever the gate's range (the factored form e^{G[t]}·e^{−G[i]} would overflow past ~88).
//
// Ops must provide (n = vector length, all pointers to contiguous floats):
//   Scale(alpha, y, n): y *= alpha;
//   CombineRows(out, out_scale, alpha, coeffs, coeff_stride, rows, row_stride, count, n):
//     out[j] = out_scale·out[j] + alpha·Σ_{i<count} coeffs[i·coeff_stride]·rows[i·row_stride + j]
//     (out_scale == 0 ignores out's old contents, NaN included);
//   Exp(x, out, n): out = e^x;
//   DecayedDots(qt, kt, ki, Gt, Gi, n, &qk, &kk): qk = Σ qt·ki·e^{Gt−Gi}, kk = Σ kt·ki·e^{Gt−Gi}.
// Thread safety: uses per-thread scratch (scratch.h, slot kB); distinct threads may run distinct heads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels {
namespace {  // each including translation unit gets its own copy, compiled with its own flags

template <class Ops>
void KdaChunkedHeads(const KdaArgs& a) {
  const int64_t dk = a.dk, dv = a.dv, Cmax = kKdaChunk;
  const size_t need = static_cast<size_t>(4 * Cmax * dk + 2 * Cmax * Cmax + 2 * Cmax * dv + dk);
  float* G = ThreadScratchArray<float>(ScratchSlot::kB, need);  // [C, dk] cumulative log gates
  float* Kg = G + Cmax * dk;       // [C, dk] e^{G[t]}⊙k_t, later e^{G[C−1]−G[i]}⊙k_i
  float* Qg = Kg + Cmax * dk;      // [C, dk] e^{G[t]}⊙q_t
  float* E = Qg + Cmax * dk;       // [C, dk] e^{G[t]}
  float* A = E + Cmax * dk;        // [C, C] strictly lower: k·k decayed
  float* B = A + Cmax * Cmax;      // [C, C] lower incl. diagonal: q·k decayed
  float* W = B + Cmax * Cmax;      // [C, dv] the new values w
  float* O = W + Cmax * dv;        // [C, dv] outputs before scaling
  float* last = O + Cmax * dv;     // [dk]

  for (int64_t h = 0; h < a.H; ++h) {
    const float* q = a.q + h * dk;
    const float* k = a.k + h * dk;
    const float* v = a.v + h * dv;
    const float* g = a.g + h * dk;
    const float* beta = a.beta + h;
    float* S = a.state + h * dk * dv;
    float* out = a.out + h * dv;

    for (int64_t t0 = 0; t0 < a.T; t0 += Cmax) {
      const int64_t C = std::min(Cmax, a.T - t0);
      auto q_at = [&](int64_t t) { return q + (t0 + t) * a.ld_qk; };
      auto k_at = [&](int64_t t) { return k + (t0 + t) * a.ld_qk; };
      for (int64_t t = 0; t < C; ++t) {
        const float* gt = g + (t0 + t) * a.ld_qk;
        float* Gt = G + t * dk;
        for (int64_t d = 0; d < dk; ++d) Gt[d] = (t == 0 ? 0.0f : Gt[d - dk]) + gt[d];
      }
      Ops::Exp(G, E, C * dk);
      for (int64_t t = 0; t < C; ++t) {
        for (int64_t d = 0; d < dk; ++d) {
          Kg[t * dk + d] = k_at(t)[d] * E[t * dk + d];
          Qg[t * dk + d] = q_at(t)[d] * E[t * dk + d];
        }
      }
      for (int64_t t = 0; t < C; ++t) {
        for (int64_t i = 0; i <= t; ++i) {
          float qk, kk;
          Ops::DecayedDots(q_at(t), k_at(t), k_at(i), G + t * dk, G + i * dk, dk, &qk, &kk);
          B[t * Cmax + i] = qk;
          A[t * Cmax + i] = kk;
        }
      }
      // Right-hand sides v_t − S0ᵀ(e^{G[t]}⊙k_t) and inter-chunk outputs S0ᵀ(e^{G[t]}⊙q_t).
      for (int64_t t = 0; t < C; ++t) {
        const float* vt = v + (t0 + t) * a.ld_v;
        std::copy(vt, vt + dv, W + t * dv);
        Ops::CombineRows(W + t * dv, 1.0f, -1.0f, Kg + t * dk, 1, S, dv, dk, dv);
        Ops::CombineRows(O + t * dv, 0.0f, 1.0f, Qg + t * dk, 1, S, dv, dk, dv);
      }
      // Forward substitution (the UT transform), then the intra-chunk outputs.
      for (int64_t t = 0; t < C; ++t) {
        float* Wt = W + t * dv;
        Ops::CombineRows(Wt, 1.0f, -1.0f, A + t * Cmax, 1, W, dv, t, dv);
        Ops::Scale(beta[(t0 + t) * a.ld_beta], Wt, dv);
      }
      for (int64_t t = 0; t < C; ++t) {
        float* Ot = O + t * dv;
        Ops::CombineRows(Ot, 1.0f, 1.0f, B + t * Cmax, 1, W, dv, t + 1, dv);
        float* dst = out + (t0 + t) * a.ld_out;
        for (int64_t j = 0; j < dv; ++j) dst[j] = Ot[j] * a.scale;
      }
      // State at the chunk's end: S[d] = e^{G[C−1,d]}·S0[d] + Σ_i k_i[d]·e^{G[C−1,d]−G[i,d]}·w_i.
      const float* Glast = G + (C - 1) * dk;
      for (int64_t i = 0; i < C; ++i)
        for (int64_t d = 0; d < dk; ++d) Kg[i * dk + d] = Glast[d] - G[i * dk + d];
      Ops::Exp(Kg, Kg, C * dk);
      for (int64_t i = 0; i < C; ++i)
        for (int64_t d = 0; d < dk; ++d) Kg[i * dk + d] *= k_at(i)[d];
      std::copy(E + (C - 1) * dk, E + C * dk, last);
      for (int64_t d = 0; d < dk; ++d) Ops::CombineRows(S + d * dv, last[d], 1.0f, Kg + d, dk, W, dv, C, dv);
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
