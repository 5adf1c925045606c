#include "model/kda.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/kernels.h"

namespace kimi::model {

KdaDims::KdaDims(const K3Config& c)
    : D(c.hidden_size),
      H(c.linear_attn.num_heads),
      d(c.linear_attn.head_dim),
      P(c.KdaProjectionDim()),
      K(c.linear_attn.short_conv_kernel_size),
      eps(float(c.rms_norm_eps)) {
  if (c.linear_attn.gate_lower_bound) lower_bound = float(*c.linear_attn.gate_lower_bound);
}

void KdaWeights::Bind(WeightBinder& b, const std::string& p, const KdaDims& n, bool full_rank_gate) {
  q_proj = b.Dense(p + "q_proj", n.P, n.D);
  k_proj = b.Dense(p + "k_proj", n.P, n.D);
  v_proj = b.Dense(p + "v_proj", n.P, n.D);
  q_conv = b.Vector(p + "q_conv1d.weight", {n.P, 1, n.K});
  k_conv = b.Vector(p + "k_conv1d.weight", {n.P, 1, n.K});
  v_conv = b.Vector(p + "v_conv1d.weight", {n.P, 1, n.K});
  a_log = b.Leading(p + "A_log", n.H);
  dt_bias = b.Leading(p + "dt_bias", n.P);
  f_a = b.Dense(p + "f_a_proj", n.d, n.D);
  f_b = b.Dense(p + "f_b_proj", n.P, n.d);
  b_proj = b.Dense(p + "b_proj", n.H, n.D);
  if (full_rank_gate) {
    g_proj = b.Dense(p + "g_proj", n.P, n.D);
  } else {
    g_a = b.Dense(p + "g_a_proj", n.d, n.D);
    g_b = b.Dense(p + "g_b_proj", n.P, n.d);
  }
  o_norm = b.Vector(p + "o_norm.weight", {n.d});
  o_proj = b.Dense(p + "o_proj", n.D, n.P);
}

uint64_t KdaWeights::MatrixBytes() const {
  return q_proj.bytes() + k_proj.bytes() + v_proj.bytes() + f_a.bytes() + f_b.bytes() + b_proj.bytes() +
         g_proj.bytes() + g_a.bytes() + g_b.bytes() + o_proj.bytes();
}

uint64_t KdaWeights::MatrixElements() const {
  return q_proj.elements() + k_proj.elements() + v_proj.elements() + f_a.elements() + f_b.elements() +
         b_proj.elements() + g_proj.elements() + g_a.elements() + g_b.elements() + o_proj.elements();
}

KdaLayerState NewKdaState(const KdaDims& n) {
  KdaLayerState s;
  s.recurrent.assign(n.H * n.d * n.d, 0.0f);
  s.conv.assign(3 * (n.K - 1) * n.P, 0.0f);
  return s;
}

kernels::KdaArgs SegmentKdaArgs(const KdaDims& n, const float* q, const float* k, const float* v, const float* g,
                                const float* beta, int64_t begin, int64_t count, float* state, float* o) {
  kernels::KdaArgs a{};
  a.q = q + begin * n.P;
  a.k = k + begin * n.P;
  a.v = v + begin * n.P;
  a.g = g + begin * n.P;
  a.beta = beta + begin * n.H;
  a.T = count;
  a.H = n.H;
  a.dk = n.d;
  a.dv = n.d;
  a.ld_qk = n.P;
  a.ld_v = n.P;
  a.ld_beta = n.H;
  a.scale = 1.0f;  // folded into the L2 normalisation of q
  a.state = state;
  a.out = o + begin * n.P;
  a.ld_out = n.P;
  return a;
}

void KdaForward(const KdaWeights& w, const KdaDims& n, const float* u, int64_t R, Segments segments, int slot,
                KdaScratch& s, float* y, ThreadPool* pool) {
  const int64_t P = n.P, H = n.H, d = n.d;
  float* q_pre = Reserve(s.q_pre, R * P);
  float* k_pre = Reserve(s.k_pre, R * P);
  float* v_pre = Reserve(s.v_pre, R * P);
  float* q = Reserve(s.q, R * P);
  float* k = Reserve(s.k, R * P);
  float* v = Reserve(s.v, R * P);
  float* f_low = Reserve(s.f_low, R * d);
  float* f = Reserve(s.f, R * P);
  float* g = Reserve(s.g, R * P);
  float* beta = Reserve(s.beta, R * H);
  float* gate = Reserve(s.gate, R * P);
  float* o = Reserve(s.o, R * P);

  // Every projection of u in one parallel region: q̃, k̃, ṽ = W_q u, W_k u, W_v u; the low-rank
  // decay input f_a u; the β logits W_b u; the output gate's logits W_g u (or its low-rank g_a u).
  float* g_low = w.g_proj.present() ? nullptr : Reserve(s.g_low, R * d);
  ProductBatch& projections = s.batch;
  projections.Clear();
  projections.Add(w.q_proj, u, q_pre);
  projections.Add(w.k_proj, u, k_pre);
  projections.Add(w.v_proj, u, v_pre);
  projections.Add(w.f_a, u, f_low);
  projections.Add(w.b_proj, u, beta);
  projections.Add(w.g_proj, u, gate);
  projections.Add(w.g_a, u, g_low);
  projections.Run(R, pool);

  // Causal conv + SiLU per sequence, continuing each one's pre-conv history. A decode's conv
  // (one token, a few thousand channels) is too small to split over the threads, so the
  // one-token segments are spread over them instead (ForEachSegment), rather than run one
  // after another on the calling thread while the others wait.
  const int width = int(n.K);
  const int64_t history = (n.K - 1) * P;
  ForEachSegment(segments, pool, [&](const Segment& seg, ThreadPool* seg_pool) {
    float* conv_state = seg.state->kda[slot].conv.data();
    const int64_t off = seg.begin * P;
    kernels::CausalConv1dSilu(q_pre + off, P, seg.count, P, w.q_conv.data(), nullptr, width, conv_state,
                              q + off, P, seg_pool);
    kernels::CausalConv1dSilu(k_pre + off, P, seg.count, P, w.k_conv.data(), nullptr, width,
                              conv_state + history, k + off, P, seg_pool);
    kernels::CausalConv1dSilu(v_pre + off, P, seg.count, P, w.v_conv.data(), nullptr, width,
                              conv_state + 2 * history, v + off, P, seg_pool);
  });

  // q ← d^-0.5 · q/‖q‖, k ← k/‖k‖ per head.
  kernels::L2Normalize(q, R * H, d, 1e-6f, 1.0f / std::sqrt(float(d)), q, pool);
  kernels::L2Normalize(k, R * H, d, 1e-6f, 1.0f, k, pool);

  // Log decay g from the low-rank f path.
  Apply(w.f_b, f_low, R, f, pool);
  if (n.lower_bound) {
    kernels::KdaGate(f, w.a_log.data(), w.dt_bias.data(), R, H, d, *n.lower_bound, g, pool);
  } else {
    // g = −exp(A_log)·softplus(f + dt_bias)
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t c = 0; c < P; ++c) {
        const float z = f[r * P + c] + w.dt_bias[c];
        const float softplus = z > 20.0f ? z : std::log1p(std::exp(z));
        g[r * P + c] = -std::exp(w.a_log[c / d]) * softplus;
      }
    }
  }

  // β = σ(W_b u), one per head.
  kernels::Sigmoid(beta, R * H, beta, pool);

  // The delta-rule recurrence per sequence: the chunked form for a run of tokens, its heads
  // split over the pool; one step for a decode. The decodes' (sequence, head) pairs are dealt
  // to the threads as one even range, so 3 decodes on 2 threads give each 18 heads rather than
  // one thread 2 sequences and the other 1; a thread's consecutive heads of one sequence go in
  // one call, whose kernel prefetches each next head's state while it works on the current one.
  std::vector<kernels::KdaArgs>& decodes = s.decodes;
  decodes.clear();
  for (const Segment& seg : segments) {
    const kernels::KdaArgs a =
        SegmentKdaArgs(n, q, k, v, g, beta, seg.begin, seg.count, seg.state->kda[slot].recurrent.data(), o);
    if (seg.count > 1) {
      kernels::KdaChunked(a, pool);
    } else {
      decodes.push_back(a);
    }
  }
  auto recurrences = [&](int64_t u0, int64_t u1, int) {
    while (u0 < u1) {
      const kernels::KdaArgs& a = decodes[size_t(u0 / H)];
      const int64_t h0 = u0 % H, h1 = std::min(H, h0 + (u1 - u0));
      kernels::KdaRecurrent(kernels::SliceKdaHeads(a, h0, h1), nullptr);
      u0 += h1 - h0;
    }
  };
  const int64_t units = int64_t(decodes.size()) * H;
  if (pool != nullptr && pool->num_threads() > 1 && units > 1) {
    pool->ParallelFor(0, units, 1, recurrences);
  } else {
    recurrences(0, units, 0);
  }

  // o ← RMSNorm(o; o_norm) ⊙ σ(gate) per head.
  kernels::RmsNorm(o, w.o_norm.data(), R * H, d, n.eps, o, pool);
  if (!w.g_proj.present()) Apply(w.g_b, g_low, R, gate, pool);
  kernels::MulSigmoid(o, gate, R * P, o, pool);

  // y = W_o o.
  Apply(w.o_proj, o, R, y, pool);
}

}  // namespace kimi::model
