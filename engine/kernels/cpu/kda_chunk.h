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
//   Dot(a, b, n) -> float;  Axpy(alpha, x, y, n): y += alpha·x;  Scale(alpha, y, n): y *= alpha;
//   Exp(x, out, n): out = e^x;
//   DecayedDots(qt, kt, ki, Gt, Gi, n, &qk, &kk): qk = Σ qt·ki·e^{Gt−Gi}, kk = Σ kt·ki·e^{Gt−Gi}.
// Thread safety: uses a thread_local scratch buffer; distinct threads may run distinct heads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels {
namespace {  // each including translation unit gets its own copy, compiled with its own flags

template <class Ops>
void KdaChunkedHeads(const KdaArgs& a) {
  const int64_t dk = a.dk, dv = a.dv, Cmax = kKdaChunk;
  thread_local std::vector<float> scratch;
  const size_t need = static_cast<size_t>(4 * Cmax * dk + 2 * Cmax * Cmax + 2 * Cmax * dv + dk);
  if (scratch.size() < need) scratch.resize(need);
  float* G = scratch.data();       // [C, dk] cumulative log gates
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
      // Right-hand sides and the inter-chunk part of the outputs: one pass over S0's rows.
      for (int64_t t = 0; t < C; ++t) {
        const float* vt = v + (t0 + t) * a.ld_v;
        std::copy(vt, vt + dv, W + t * dv);
        std::fill(O + t * dv, O + (t + 1) * dv, 0.0f);
      }
      for (int64_t d = 0; d < dk; ++d) {
        const float* Sd = S + d * dv;
        for (int64_t t = 0; t < C; ++t) {
          Ops::Axpy(-Kg[t * dk + d], Sd, W + t * dv, dv);
          Ops::Axpy(Qg[t * dk + d], Sd, O + t * dv, dv);
        }
      }
      // Forward substitution (the UT transform), then the intra-chunk outputs.
      for (int64_t t = 0; t < C; ++t) {
        float* Wt = W + t * dv;
        for (int64_t i = 0; i < t; ++i) Ops::Axpy(-A[t * Cmax + i], W + i * dv, Wt, dv);
        Ops::Scale(beta[(t0 + t) * a.ld_beta], Wt, dv);
      }
      for (int64_t t = 0; t < C; ++t) {
        float* Ot = O + t * dv;
        for (int64_t i = 0; i <= t; ++i) Ops::Axpy(B[t * Cmax + i], W + i * dv, Ot, dv);
        float* dst = out + (t0 + t) * a.ld_out;
        for (int64_t j = 0; j < dv; ++j) dst[j] = Ot[j] * a.scale;
      }
      // State at the chunk's end.
      const float* Glast = G + (C - 1) * dk;
      for (int64_t i = 0; i < C; ++i)
        for (int64_t d = 0; d < dk; ++d) Kg[i * dk + d] = Glast[d] - G[i * dk + d];
      Ops::Exp(Kg, Kg, C * dk);
      for (int64_t i = 0; i < C; ++i)
        for (int64_t d = 0; d < dk; ++d) Kg[i * dk + d] *= k_at(i)[d];
      std::copy(E + (C - 1) * dk, E + C * dk, last);
      for (int64_t d = 0; d < dk; ++d) {
        float* Sd = S + d * dv;
        Ops::Scale(last[d], Sd, dv);
        for (int64_t i = 0; i < C; ++i) Ops::Axpy(Kg[i * dk + d], W + i * dv, Sd, dv);
      }
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
