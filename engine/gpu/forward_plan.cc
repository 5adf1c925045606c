#include "gpu/forward_plan.h"

#include <algorithm>
#include <string>

namespace kimi::gpu {

Result<ActivationPlan> ActivationPlan::For(const K3Config& c, int64_t rows) {
  if (rows < 1) return Status::InvalidArgument("ActivationPlan: rows must be at least 1");
  ActivationPlan p;
  p.rows = rows;
  const int64_t R = rows, D = c.hidden_size, V = c.vocab_size, L = c.num_hidden_layers;
  const int64_t P = c.KdaProjectionDim(), d = c.linear_attn.head_dim, Hk = c.linear_attn.num_heads;
  const int64_t H = c.num_attention_heads, dn = c.qk_nope_head_dim, dr = c.qk_rope_head_dim, dv = c.v_head_dim;
  const int64_t rq = c.q_lora_rank, rc = c.kv_lora_rank;
  const int64_t E = c.num_experts, k = c.num_experts_per_token, Dl = c.ExpertInputDim();
  const int64_t F = c.moe_intermediate_size;
  const int64_t block = c.attn_res_block_size;
  p.snapshots = block > 0 ? (L + block - 1) / block : 0;
  bool any_kda = false, any_mla = false, any_dense = false, any_moe = false;
  for (int64_t i = 0; i < L; ++i) {
    (c.IsKdaLayer(i) ? any_kda : any_mla) = true;
    (c.IsMoeLayer(i) ? any_moe : any_dense) = true;
  }
  const int64_t ffn_width = std::max(any_dense ? c.intermediate_size : 0, any_moe ? c.SharedExpertWidth() : 0);
  const int64_t routed = any_moe ? R * k : 0;

  uint64_t at = 0;
  auto take = [&](Slice& s, int64_t elements) {
    s.offset = at;
    s.bytes = uint64_t(std::max<int64_t>(elements, 0)) * 4;  // float or int32
    at += (s.bytes + kAlignment - 1) / kAlignment * kAlignment;
  };
  take(p.tokens, R);
  take(p.partial, R * D);
  take(p.mixed, R * D);
  take(p.normed, R * D);
  take(p.out, R * D);
  take(p.blocks, p.snapshots * R * D);
  take(p.logit_rows, R);
  take(p.head_in, R * D);
  take(p.logits, R * V);
  const int64_t kda_rows = any_kda ? R : 0;
  for (Slice* s : {&p.kda_q_pre, &p.kda_k_pre, &p.kda_v_pre, &p.kda_q, &p.kda_k, &p.kda_v, &p.kda_f, &p.kda_g,
                   &p.kda_gate, &p.kda_o}) {
    take(*s, kda_rows * P);
  }
  take(p.kda_f_low, kda_rows * d);
  take(p.kda_g_low, kda_rows * d);
  take(p.kda_beta, kda_rows * Hk);
  const int64_t mla_rows = any_mla ? R : 0;
  take(p.mla_c_q, mla_rows * rq);
  take(p.mla_q, mla_rows * H * (dn + dr));
  take(p.mla_kv, mla_rows * (rc + dr));
  take(p.mla_q_latent, mla_rows * H * rc);
  take(p.mla_o_latent, mla_rows * H * rc);
  take(p.mla_q_pe, mla_rows * H * dr);
  take(p.mla_o, mla_rows * H * dv);
  take(p.mla_gate, mla_rows * H * dv);
  take(p.ffn_gate, R * ffn_width);
  take(p.ffn_up, R * ffn_width);
  take(p.router_logits, any_moe ? R * E : 0);
  take(p.route_ids, routed);
  take(p.route_weights, routed);
  take(p.latent, any_moe ? R * Dl : 0);
  take(p.acc, any_moe ? R * Dl : 0);
  take(p.rows_in, routed * Dl);
  take(p.rows_out, routed * Dl);
  take(p.expert_gate, routed * F);
  take(p.expert_up, routed * F);
  take(p.ffn_out2, any_moe ? R * D : 0);
  p.max_groups = any_moe ? std::min(E, routed) : 0;
  take(p.plan_ints, any_moe ? 2 * routed + R + 1 + 3 * p.max_groups : 0);
  take(p.plan_weights, routed);
  p.total_bytes = at;
  return p;
}

Result<ExpertPlan> ExpertPlan::Build(const int32_t* ids, const float* weights, int64_t R, int k, int64_t E) {
  ExpertPlan p;
  const int64_t n = R * k;
  std::vector<int32_t> count(size_t(E), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= E) {
      return Status::InvalidArgument("ExpertPlan: expert id " + std::to_string(ids[i]) + " outside [0, " +
                                     std::to_string(E) + ")");
    }
    ++count[size_t(ids[i])];
  }
  // Experts in ascending order, each one's rows packed in token order.
  std::vector<int32_t> next(size_t(E), 0);
  int32_t first = 0;
  for (int64_t e = 0; e < E; ++e) {
    next[size_t(e)] = first;
    if (count[size_t(e)] > 0) p.active.push_back({int32_t(e), first, count[size_t(e)]});
    first += count[size_t(e)];
  }
  p.source_row.assign(size_t(n), 0);
  std::vector<int32_t> packed_of(static_cast<size_t>(n));
  for (int64_t r = 0; r < R; ++r) {
    for (int j = 0; j < k; ++j) {
      const int32_t slot = next[size_t(ids[r * k + j])]++;
      p.source_row[size_t(slot)] = int32_t(r);
      packed_of[size_t(r * k + j)] = slot;
    }
  }
  // Each token's entries in ascending expert order (the order the CPU adds them in).
  p.row_begin.resize(size_t(R) + 1);
  p.packed.reserve(size_t(n));
  p.weight.reserve(size_t(n));
  std::vector<int> order(static_cast<size_t>(k));
  for (int64_t r = 0; r < R; ++r) {
    p.row_begin[size_t(r)] = int32_t(p.packed.size());
    for (int j = 0; j < k; ++j) order[size_t(j)] = j;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return ids[r * k + a] < ids[r * k + b]; });
    for (int j : order) {
      p.packed.push_back(packed_of[size_t(r * k + j)]);
      p.weight.push_back(weights[r * k + j]);
    }
  }
  p.row_begin[size_t(R)] = int32_t(p.packed.size());
  return p;
}

}  // namespace kimi::gpu
