// The host-side plans of the GPU forward pass, on CPU machines: the activation layout of each
// preset (slices in order, aligned, not overlapping, sized from the config) and the grouping of
// routed rows by expert against a direct recomputation of what model::MoeForward does.
#include "gpu/forward_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "io/k3_presets.h"

namespace kimi::gpu {
namespace {

std::vector<ActivationPlan::Slice> AllSlices(const ActivationPlan& p) {
  return {p.tokens, p.partial, p.mixed, p.normed, p.out, p.blocks, p.logit_rows, p.head_in, p.logits,
          p.kda_q_pre, p.kda_k_pre, p.kda_v_pre, p.kda_q, p.kda_k, p.kda_v, p.kda_f, p.kda_g, p.kda_gate,
          p.kda_o, p.kda_f_low, p.kda_g_low, p.kda_beta, p.mla_c_q, p.mla_q, p.mla_kv, p.mla_q_latent,
          p.mla_o_latent, p.mla_q_pe, p.mla_o, p.mla_gate, p.ffn_gate, p.ffn_up, p.router_logits, p.route_ids,
          p.route_weights, p.latent, p.acc, p.rows_in, p.rows_out, p.expert_gate, p.expert_up, p.ffn_out2,
          p.plan_ints, p.plan_weights};
}

TEST(ActivationPlanTest, SlicesAreAlignedDisjointAndInsideTheTotal) {
  for (const char* name : {"k3-nano", "k3-mini", "k3-full-shape"}) {
    auto c = K3Preset(name);
    ASSERT_TRUE(c.ok());
    for (int64_t rows : {1, 7, 256}) {
      auto plan = ActivationPlan::For(*c, rows);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      uint64_t end = 0;
      for (const auto& s : AllSlices(*plan)) {
        EXPECT_EQ(s.offset % ActivationPlan::kAlignment, 0u) << name;
        EXPECT_GE(s.offset, end) << name << ": slices overlap or are out of order";
        end = s.offset + s.bytes;
      }
      EXPECT_LE(end, plan->total_bytes);
    }
  }
}

TEST(ActivationPlanTest, SizesFollowTheConfig) {
  auto c = K3Preset("k3-nano");
  ASSERT_TRUE(c.ok());
  auto p = ActivationPlan::For(*c, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->partial.bytes, 10u * 128 * 4);
  EXPECT_EQ(p->logits.bytes, uint64_t(10 * c->vocab_size * 4));
  EXPECT_EQ(p->snapshots, 3);  // 6 layers, blocks of 2
  EXPECT_EQ(p->blocks.bytes, 3u * 10 * 128 * 4);
  EXPECT_EQ(p->rows_in.bytes, uint64_t(10 * c->num_experts_per_token * c->ExpertInputDim() * 4));
  EXPECT_EQ(p->mla_q_latent.bytes, uint64_t(10 * c->num_attention_heads * c->kv_lora_rank * 4));
  EXPECT_EQ(p->ffn_gate.bytes, uint64_t(10 * std::max(c->intermediate_size, c->SharedExpertWidth()) * 4));
  EXPECT_EQ(p->max_groups, std::min<int64_t>(c->num_experts, 10 * c->num_experts_per_token));
  EXPECT_EQ(p->plan_ints.bytes, uint64_t((2 * 10 * c->num_experts_per_token + 11 + 3 * p->max_groups) * 4));
  EXPECT_FALSE(ActivationPlan::For(*c, 0).ok());
}

TEST(ExpertPlanTest, GroupsRowsByExpertAndListsEachTokensEntriesInExpertOrder) {
  const int64_t R = 37, E = 16;
  const int k = 4;
  std::mt19937 rng(5);
  std::vector<int32_t> ids(R * k);
  std::vector<float> weights(R * k);
  for (int64_t r = 0; r < R; ++r) {
    std::vector<int32_t> all(E);
    for (int32_t e = 0; e < E; ++e) all[e] = e;
    std::shuffle(all.begin(), all.end(), rng);
    for (int j = 0; j < k; ++j) {
      ids[r * k + j] = all[j];
      weights[r * k + j] = float(r * 10 + j);
    }
  }
  auto plan = ExpertPlan::Build(ids.data(), weights.data(), R, k, E);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();

  // What MoeForward builds: per expert (ascending) the (row, weight) list in token order.
  std::map<int32_t, std::vector<std::pair<int32_t, float>>> by_expert;
  for (int64_t r = 0; r < R; ++r)
    for (int j = 0; j < k; ++j) by_expert[ids[r * k + j]].push_back({int32_t(r), weights[r * k + j]});
  ASSERT_EQ(plan->active.size(), by_expert.size());
  size_t a = 0;
  int32_t first = 0;
  for (const auto& [e, rows] : by_expert) {
    EXPECT_EQ(plan->active[a].expert, e);
    EXPECT_EQ(plan->active[a].first, first);
    ASSERT_EQ(plan->active[a].count, int32_t(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(plan->source_row[first + i], rows[i].first);
    first += int32_t(rows.size());
    ++a;
  }
  // Each token: k entries, ascending expert, each pointing at a packed row of that token.
  ASSERT_EQ(plan->row_begin.size(), size_t(R + 1));
  for (int64_t r = 0; r < R; ++r) {
    ASSERT_EQ(plan->row_begin[r + 1] - plan->row_begin[r], k);
    int32_t last_expert = -1;
    for (int32_t i = plan->row_begin[r]; i < plan->row_begin[r + 1]; ++i) {
      const int32_t slot = plan->packed[i];
      EXPECT_EQ(plan->source_row[slot], r);
      int32_t expert = -1;
      for (const auto& act : plan->active)
        if (slot >= act.first && slot < act.first + act.count) expert = act.expert;
      EXPECT_GT(expert, last_expert);
      last_expert = expert;
      int j = 0;
      while (ids[r * k + j] != expert) ++j;
      EXPECT_EQ(plan->weight[i], weights[r * k + j]);
    }
  }
}

TEST(ExpertPlanTest, RejectsAnIdOutsideTheExperts) {
  const std::vector<int32_t> ids = {0, 16};
  const std::vector<float> w = {0.5f, 0.5f};
  EXPECT_FALSE(ExpertPlan::Build(ids.data(), w.data(), 1, 2, 16).ok());
}

}  // namespace
}  // namespace kimi::gpu
