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
// Every exponent there is of a difference G[t]−G[i] with t >= i, so it is <= 0; the factored
// form e^{G[t]}·e^{−G[i]} over a whole chunk would overflow past ~88 (32 tokens at −5: 160).
//
// Computed as matrix products (Ops::Gemm) over sub-blocks of kKdaSub = 16 tokens. A product
// needs the decay factored, e^{G[t]−G[i]} = e^{G[t]−G[p]}·e^{G[p]−G[i]}, and the factors must
// stay finite and normal (with flush-to-zero a subnormal factor is a zero, wrong whenever its
// partner is large). So each row sub-block [p, e] is anchored at its own first token p:
//   • rows t of the block take e^{G[t]−G[p]} (exponent <= 0);
//   • earlier tokens i < p take e^{G[p]−G[i]} (<= 0), built as k_i·e^{G[e_b]−G[i]} (its own
//     block's end e_b) times e^{G[p]−G[e_b]}: both <= 0, so nothing overflows and a factor
//     underflows only where the whole decay does;
//   • tokens of the block itself take e^{G[p]−G[i]} >= 0, at most the block's decay range
//     R = max_d (G[p,d] − G[e,d]). While R <= kMaxFactoredRange (80) every factor lies in
//     [e^−80, e^80], normal floats, and the product is exact to rounding. K3's gates are
//     >= −5 per token, so a block of 16 spans at most 15·5 = 75 and always takes the product.
//     A block past the bound (gates below about −5.3) has its 16×16 triangle computed in the
//     difference form instead (Ops::DecayedDots): slower, never wrong.
// Gates must be <= 0 (KDA's gate is lower_bound·sigmoid(·)); products of an exponent above
// the diagonal may overflow, and those entries are zeroed or never read.
// The products per chunk (C tokens, dk × dv state), Qg = e^{G}⊙q and Kg = e^{G}⊙k:
//   [Kg; Qg]·S0 (the right-hand sides, and the inter-chunk outputs written straight to out),
//   per sub-block a: Kx·[Ka; Qa]ᵀ (A and B of its rows, transposed), W_a −= A[a, <p]·W[<p],
//   the in-block forward substitution, O_a += B[a, <=e]·W[<=e];
//   then S = diag(e^{G[C−1]})·S0 + Kdᵀ·W.
//
// Ops must provide (n = vector length, all pointers to contiguous floats):
//   Gemm: GemmF32Fn of kernel_table.h;
//   CombineRows(out, out_scale, alpha, coeffs, coeff_stride, rows, row_stride, count, n):
//     out[j] = out_scale·out[j] + alpha·Σ_{i<count} coeffs[i·coeff_stride]·rows[i·row_stride + j]
//     (out_scale == 0 ignores out's old contents, NaN included; the forward substitution passes
//     β_t and −β_t);
//   Exp(x, out, n): out = e^x;
//   DecayRow(k, q, Gt, Gp, Ge, eGp, n, ka, qa, kg, qg, kend): with f = e^{Gt−Gp},
//     ka = k⊙f, qa = q⊙f, kg = ka⊙eGp, qg = qa⊙eGp, kend = k⊙e^{Ge−Gt};
//   DecayRowFactored(k, q, Gt, Gp, eGp, eGep, n, ka, qa, kg, qg, kx, kend): the same for a block
//     within the factored range (every f >= e^−80, a normal float), with one exponential: kx = k/f
//     (= k⊙e^{Gp−Gt}, the block's own row of Kx) and kend = kx⊙eGep, eGep = e^{Ge−Gp};
//   Transpose(src, rows, cols, ld_src, dst, ld_dst): dst[c·ld_dst + r] = src[r·ld_src + c];
//   DecayedDots(qt, kt, ki, Gt, Gi, n, &qk, &kk): qk = Σ qt·ki·e^{Gt−Gi}, kk = Σ kt·ki·e^{Gt−Gi};
//   Prefetch(p, bytes): a hint to bring [p, p + bytes) towards the cache (may do nothing).
// A head's token rows lie H·dk floats apart, a multiple of 4 KiB, beyond what the hardware
// prefetchers follow and all in the same cache sets: the chunk's q, k, g and v rows are each
// read once, kAhead rows after their prefetch (to L2: in L1 they would evict one another), g
// and v into contiguous scratch, q and k straight into their decayed forms (DecayRow); the
// output rows are prefetched alongside for the products that write them.
// Thread safety: uses per-thread scratch (scratch.h, slot kB); distinct threads may run distinct heads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels {

// The decay range up to which a sub-block's own tokens' factors are taken as products.
inline constexpr float kKdaMaxFactoredRange = 80.0f;

namespace {  // each including translation unit gets its own copy, compiled with its own flags

// dst[j] = a[j]·b[j] for j < n.
inline void MulRow(const float* a, const float* b, int64_t n, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = a[j] * b[j];
}

constexpr int64_t kAhead = 8;  // rows between a prefetch and the read (a few hundred cycles)

template <class Ops>
void KdaChunkedHeads(const KdaArgs& a) {
  const int64_t dk = a.dk, dv = a.dv, Cmax = kKdaChunk, S = kKdaSub, ldab = 2 * kKdaSub;
  const size_t need = static_cast<size_t>(7 * Cmax * dk + 2 * S * dk + Cmax * dv + Cmax * ldab + 2 * dk);
  float* G = ThreadScratchArray<float>(ScratchSlot::kB, need);  // [C, dk] cumulative log gates
  float* Ka = G + Cmax * dk;       // [C, dk] k_t·e^{G[t]−G[p]}, p the first token of t's sub-block
  float* Qa = Ka + Cmax * dk;      // [C, dk] q_t·e^{G[t]−G[p]}
  float* Kend = Qa + Cmax * dk;    // [C, dk] k_i·e^{G[e]−G[i]}, e the last token of i's sub-block; then Kd
  float* Kx = Kend + Cmax * dk;    // [C, dk] k_i·e^{G[p]−G[i]} for the current sub-block's p
  float* KQ = Kx + Cmax * dk;      // [2C, dk] Kg rows then Qg rows
  float* KQT = KQ + 2 * Cmax * dk; // [dk, 2S] the current sub-block's Ka | Qa, transposed
  float* W = KQT + 2 * S * dk;     // [C, dv] the new values w
  float* AB = W + Cmax * dv;       // [C, 2S] column c < S: A[p+c, i]; c >= S: B[p+c−S, i]
  float* vec = AB + Cmax * ldab;   // [dk] a per-block decay vector
  float* diff = vec + dk;          // [dk]

  // Token t's rows of head h towards the cache.
  auto prefetch_row = [&](int64_t h, int64_t t) {
    const int64_t qk = t * a.ld_qk + h * dk;
    Ops::Prefetch(a.g + qk, dk * sizeof(float));
    Ops::Prefetch(a.q + qk, dk * sizeof(float));
    Ops::Prefetch(a.k + qk, dk * sizeof(float));
    Ops::Prefetch(a.v + t * a.ld_v + h * dv, dv * sizeof(float));
    Ops::Prefetch(a.out + t * a.ld_out + h * dv, dv * sizeof(float));
  };
  for (int64_t t = 0; t < std::min(kAhead, a.T); ++t) prefetch_row(0, t);

  for (int64_t h = 0; h < a.H; ++h) {
    const float* v = a.v + h * dv;
    const float* g = a.g + h * dk;
    const float* beta = a.beta + h;
    float* Sh = a.state + h * dk * dv;
    float* out = a.out + h * dv;

    for (int64_t t0 = 0; t0 < a.T; t0 += Cmax) {
      const int64_t C = std::min(Cmax, a.T - t0);
      const int64_t nblocks = (C + S - 1) / S;
      // The chunk's own tokens' rows where they lie (read again only in the rare difference form).
      auto q_at = [&](int64_t t) { return a.q + (t0 + t) * a.ld_qk + h * dk; };
      auto k_at = [&](int64_t t) { return a.k + (t0 + t) * a.ld_qk + h * dk; };
      auto first = [&](int64_t b) { return b * S; };
      auto last = [&](int64_t b) { return std::min(b * S + S, C) - 1; };
      for (int64_t t = 0; t < C; ++t) {
        if (t + kAhead < C) prefetch_row(h, t0 + t + kAhead);
        const float* gt = g + (t0 + t) * a.ld_qk;
        float* Gt = G + t * dk;
        for (int64_t d = 0; d < dk; ++d) Gt[d] = (t == 0 ? 0.0f : Gt[d - dk]) + gt[d];
        std::copy(v + (t0 + t) * a.ld_v, v + (t0 + t) * a.ld_v + dv, W + t * dv);
      }
      // Ka, Qa, their e^{G[t]} forms Kg, Qg (e^{G[t]} = e^{G[t]−G[p]}·e^{G[p]}, both <= 1) and Kend;
      // a block within the factored range also gets its own rows of Kx here, k_i·e^{G[p]−G[i]}.
      bool factored[Cmax / S + 1];
      for (int64_t b = 0; b < nblocks; ++b) {
        const float *Gp = G + first(b) * dk, *Ge = G + last(b) * dk;
        float range = 0.0f;  // the block's decay range, negated
        for (int64_t d = 0; d < dk; ++d) {
          diff[d] = Ge[d] - Gp[d];
          range = std::min(range, diff[d]);
        }
        factored[b] = -range <= kKdaMaxFactoredRange;
        Ops::Exp(Gp, vec, dk);
        if (factored[b]) {
          Ops::Exp(diff, diff, dk);
          for (int64_t t = first(b); t <= last(b); ++t) {
            Ops::DecayRowFactored(k_at(t), q_at(t), G + t * dk, Gp, vec, diff, dk, Ka + t * dk, Qa + t * dk,
                                  KQ + t * dk, KQ + (C + t) * dk, Kx + t * dk, Kend + t * dk);
          }
        } else {
          for (int64_t t = first(b); t <= last(b); ++t) {
            Ops::DecayRow(k_at(t), q_at(t), G + t * dk, Gp, Ge, vec, dk, Ka + t * dk, Qa + t * dk, KQ + t * dk,
                          KQ + (C + t) * dk, Kend + t * dk);
          }
          std::fill(Kx + first(b) * dk, Kx + (last(b) + 1) * dk, 0.0f);
        }
      }
      // Right-hand sides v_t − S0ᵀ(e^{G[t]}⊙k_t) and inter-chunk outputs S0ᵀ(e^{G[t]}⊙q_t).
      Ops::Gemm(KQ, dk, 1, Sh, dv, C, dv, dk, -1.0f, 1.0f, nullptr, W, dv);
      float* O = out + t0 * a.ld_out;  // the outputs, scaled as they are summed
      Ops::Gemm(KQ + C * dk, dk, 1, Sh, dv, C, dv, dk, a.scale, 0.0f, nullptr, O, a.ld_out);

      for (int64_t blk = 0; blk < nblocks; ++blk) {
        const int64_t p = first(blk), e = last(blk), n = e - p + 1;
        // Ka | Qa transposed: KQT[d, c] = Ka[p+c, d] (c < n), Qa[p+c−S, d] (S <= c < S + n).
        Ops::Transpose(Ka + p * dk, n, dk, dk, KQT, ldab);
        Ops::Transpose(Qa + p * dk, n, dk, dk, KQT + S, ldab);
        // Kx: the earlier sub-blocks' rows rescaled to p (its own rows are in place already).
        for (int64_t b = 0; b < blk; ++b) {
          const float *Gp = G + p * dk, *Ge = G + last(b) * dk;
          for (int64_t d = 0; d < dk; ++d) diff[d] = Gp[d] - Ge[d];
          Ops::Exp(diff, vec, dk);
          for (int64_t i = first(b); i <= last(b); ++i) MulRow(Kend + i * dk, vec, dk, Kx + i * dk);
        }
        // AB[i, c] = Σ_d Kx[i, d]·KQT[d, c] for the tokens i <= e; columns S.. start at S
        // whatever n is, so the product covers columns [0, S + n).
        Ops::Gemm(Kx, dk, 1, KQT, ldab, e + 1, S + n, dk, 1.0f, 0.0f, nullptr, AB, ldab);
        for (int64_t t = p; t <= e; ++t) {
          for (int64_t i = p; i <= e; ++i) {
            float* b_ti = AB + i * ldab + S + (t - p);
            if (i > t) {
              *b_ti = 0.0f;  // above the diagonal: not part of B
            } else if (!factored[blk]) {
              float qk, kk;
              Ops::DecayedDots(q_at(t), k_at(t), k_at(i), G + t * dk, G + i * dk, dk, &qk, &kk);
              AB[i * ldab + (t - p)] = kk;
              *b_ti = qk;
            }
          }
        }
        // The block's new values: off-block part as a product, then forward substitution.
        Ops::Gemm(AB, 1, ldab, W, dv, n, dv, p, -1.0f, 1.0f, nullptr, W + p * dv, dv);
        for (int64_t t = p; t <= e; ++t) {
          const float beta_t = beta[(t0 + t) * a.ld_beta];  // w_t = β_t·(w_t − Σ_{p<=i<t} A[t, i]·w_i)
          Ops::CombineRows(W + t * dv, beta_t, -beta_t, AB + p * ldab + (t - p), ldab, W + p * dv, dv, t - p, dv);
        }
        Ops::Gemm(AB + S, 1, ldab, W, dv, n, dv, e + 1, a.scale, 1.0f, nullptr, O + p * a.ld_out, a.ld_out);
      }
      // State at the chunk's end: S[d] = e^{G[C−1,d]}·S0[d] + Σ_i k_i[d]·e^{G[C−1,d]−G[i,d]}·w_i,
      // the decayed keys Kd[i] = Kend[i]·e^{G[C−1]−G[e_b]} (both factors <= 1).
      // The next chunk's first rows (the gather above fetches the rest kAhead rows ahead).
      const int64_t next_h = t0 + Cmax < a.T ? h : h + 1, next_t = t0 + Cmax < a.T ? t0 + Cmax : 0;
      if (next_h < a.H) {
        for (int64_t t = next_t; t < std::min(next_t + kAhead, a.T); ++t) prefetch_row(next_h, t);
      }
      const float* Glast = G + (C - 1) * dk;
      for (int64_t b = 0; b + 1 < nblocks; ++b) {  // the last block's factor is e^0 = 1
        const float* Ge = G + last(b) * dk;
        for (int64_t d = 0; d < dk; ++d) diff[d] = Glast[d] - Ge[d];
        Ops::Exp(diff, vec, dk);
        for (int64_t i = first(b); i <= last(b); ++i) MulRow(Kend + i * dk, vec, dk, Kend + i * dk);
      }
      // The decay of S0's rows is applied by the product as it rewrites them (no pass of its own).
      Ops::Exp(Glast, vec, dk);
      Ops::Gemm(Kend, 1, dk, W, dv, dk, dv, C, 1.0f, 1.0f, vec, Sh, dv);
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
