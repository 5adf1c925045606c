#include "model/mla.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/kernels.h"

namespace kimi::model {
namespace {

constexpr float kMlaNormEps = 1e-6f;  // q_a_layernorm and kv_a_layernorm (docs/engine.md, Decisions)

// Row t of the cache. A private cache grows by a page when t is the first token of a new page;
// a pooled one already has the page (ForwardBatch checked the block table).
float* CacheRow(MlaLatentCache& cache, int64_t t) {
  const int64_t page = t / cache.page_tokens;
  while (cache.shared_pages == nullptr && static_cast<int64_t>(cache.block_table.size()) <= page) {
    const int64_t physical = static_cast<int64_t>(cache.pages.size()) / (cache.page_tokens * cache.row_width);
    cache.pages.resize(cache.pages.size() + cache.page_tokens * cache.row_width);
    cache.block_table.push_back(static_cast<int32_t>(physical));
  }
  float* base = cache.shared_pages != nullptr ? cache.shared_pages : cache.pages.data();
  return base + (int64_t(cache.block_table[page]) * cache.page_tokens + t % cache.page_tokens) * cache.row_width;
}

}  // namespace

MlaDims::MlaDims(const K3Config& c)
    : D(c.hidden_size),
      H(c.num_attention_heads),
      dn(c.qk_nope_head_dim),
      dr(c.qk_rope_head_dim),
      dv(c.v_head_dim),
      rq(c.q_lora_rank),
      rc(c.kv_lora_rank),
      scale(1.0f / std::sqrt(float(c.qk_nope_head_dim + c.qk_rope_head_dim))) {}

void MlaWeights::Bind(WeightBinder& b, const std::string& p, const MlaDims& n, const K3Config& c) {
  if (n.rq > 0) {
    q_a = b.Dense(p + "q_a_proj", n.rq, n.D);
    q_a_norm = b.Vector(p + "q_a_layernorm.weight", {n.rq});
    q_b = b.Dense(p + "q_b_proj", n.q_width(), n.rq);
  } else {
    q_proj = b.Dense(p + "q_proj", n.q_width(), n.D);
  }
  kv_a = b.Dense(p + "kv_a_proj_with_mqa", n.rc + n.dr, n.D);
  kv_a_norm = b.Vector(p + "kv_a_layernorm.weight", {n.rc});
  kv_b = b.Matrix(p + "kv_b_proj.weight", n.H * (n.dn + n.dv), n.rc);
  if (c.mla_use_output_gate) g_proj = b.Dense(p + "g_proj", n.H * n.dv, n.D);
  o_proj = b.Dense(p + "o_proj", n.D, n.H * n.dv);
}

uint64_t MlaWeights::MatrixBytes() const {
  return q_a.bytes() + q_b.bytes() + q_proj.bytes() + kv_a.bytes() + kv_b.bytes() + g_proj.bytes() +
         o_proj.bytes();
}

uint64_t MlaWeights::MatrixElements() const {
  return q_a.elements() + q_b.elements() + q_proj.elements() + kv_a.elements() + kv_b.elements() +
         g_proj.elements() + o_proj.elements();
}

MlaLatentCache NewMlaCache(const MlaDims& n, int64_t page_tokens) {
  MlaLatentCache cache;
  cache.page_tokens = page_tokens;
  cache.row_width = n.row_width();
  return cache;
}

void MlaForward(const MlaWeights& w, const MlaDims& n, const float* u, int64_t R, Segments segments, int slot,
                MlaScratch& s, float* y, ThreadPool* pool) {
  const int64_t H = n.H, qw = n.dn + n.dr, rc = n.rc, dr = n.dr, dv = n.dv, row = n.row_width();
  float* q = Reserve(s.q, R * n.q_width());
  float* kv = Reserve(s.kv, R * row);
  float* q_latent = Reserve(s.q_latent, R * H * rc);
  float* q_pe = Reserve(s.q_pe, R * H * dr);
  float* o_latent = Reserve(s.o_latent, R * H * rc);
  float* o = Reserve(s.o, R * H * dv);

  // Every projection of u in one parallel region: W_qa u (or the full-rank q), [c̃ | k_pe] =
  // W_kva u, and the output gate's logits W_g u.
  float* c_q = w.q_a.present() ? Reserve(s.c_q, R * n.rq) : nullptr;
  float* gate = w.g_proj.present() ? Reserve(s.gate, R * H * dv) : nullptr;
  ProductBatch& projections = s.batch;
  projections.Clear();
  projections.Add(w.q_a, u, c_q);
  projections.Add(w.q_proj, u, q);
  projections.Add(w.kv_a, u, kv);
  projections.Add(w.g_proj, u, gate);
  projections.Run(R, pool);

  // q = W_qb RMSNorm(W_qa u), per head [q_nope | q_pe].
  if (w.q_a.present()) {
    kernels::RmsNorm(c_q, w.q_a_norm.data(), R, n.rq, kMlaNormEps, c_q, pool);
    Apply(w.q_b, c_q, R, q, pool);
  }

  // The cache keeps [RMSNorm(c̃) | k_pe] for every token.
  for (const Segment& seg : segments) {
    MlaLatentCache& cache = seg.state->mla[slot];
    for (int64_t j = 0; j < seg.count; ++j) {
      const float* src = kv + (seg.begin + j) * row;
      float* dst = CacheRow(cache, seg.past + j);
      kernels::RmsNorm(src, w.kv_a_norm.data(), 1, rc, kMlaNormEps, dst, nullptr);
      std::memcpy(dst + rc, src + rc, sizeof(float) * dr);
    }
  }

  // Absorb W_UK into the query: q̂_h = W_UK,hᵀ q_nope,h; gather q_pe per head.
  kernels::HeadsTransposedBf16(q, n.q_width(), qw, w.kv_b.w, (n.dn + dv) * rc, R, H, n.dn, rc, q_latent, pool);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t h = 0; h < H; ++h) {
      std::memcpy(q_pe + (r * H + h) * dr, q + r * n.q_width() + h * qw + n.dn, sizeof(float) * dr);
    }
  }

  // Causal attention of each sequence's new tokens over its latent cache; decodes of several
  // sequences in one parallel region (ForEachSegment).
  ForEachSegment(segments, pool, [&](const Segment& seg, ThreadPool* seg_pool) {
    const MlaLatentCache& cache = seg.state->mla[slot];
    const float* base = cache.shared_pages != nullptr ? cache.shared_pages : cache.pages.data();
    kernels::MlaPagedCache view{base, cache.block_table.data(), cache.page_tokens, rc, dr};
    kernels::MlaAbsorbedAttention(q_latent + seg.begin * H * rc, q_pe + seg.begin * H * dr, seg.count, H,
                                  seg.past, view, n.scale, o_latent + seg.begin * H * rc, seg_pool);
  });

  // o_h = W_UV,h ô_h, every head in one parallel region.
  ProductBatch& values = s.batch;
  values.Clear();
  for (int64_t h = 0; h < H; ++h) {
    const uint16_t* w_uv = w.kv_b.Row(h * (n.dn + dv) + n.dn);
    values.Add({o_latent + h * rc, H * rc, w_uv, dv, rc, o + h * dv, H * dv});
  }
  values.Run(R, pool);

  // Output gate σ(W_g u), then y = W_o o.
  if (gate != nullptr) kernels::MulSigmoid(o, gate, R * H * dv, o, pool);
  Apply(w.o_proj, o, R, y, pool);
}

}  // namespace kimi::model
