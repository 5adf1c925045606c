#include "gpu/bench_presets.h"

#include <gtest/gtest.h>

#include "io/k3_presets.h"
#include "kimi/model_size.h"

namespace kimi::gpu {
namespace {

TEST(GpuBenchPresets, K3WidthsFewerLayersAndExpertsAbout40GB) {
  auto c = GpuBenchPreset("k3-h200-40g");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const K3Config full = *K3Preset("k3-full-shape");
  EXPECT_EQ(c->hidden_size, full.hidden_size);
  EXPECT_EQ(c->linear_attn.num_heads, full.linear_attn.num_heads);
  EXPECT_EQ(c->linear_attn.head_dim, full.linear_attn.head_dim);
  EXPECT_EQ(c->q_lora_rank, full.q_lora_rank);
  EXPECT_EQ(c->kv_lora_rank, full.kv_lora_rank);
  EXPECT_EQ(c->intermediate_size, full.intermediate_size);
  EXPECT_EQ(c->moe_intermediate_size, full.moe_intermediate_size);
  EXPECT_EQ(c->routed_expert_hidden_size, full.routed_expert_hidden_size);
  EXPECT_EQ(c->num_experts_per_token, full.num_experts_per_token);
  EXPECT_EQ(c->vocab_size, full.vocab_size);
  EXPECT_LT(c->num_hidden_layers, full.num_hidden_layers);
  EXPECT_LT(c->num_experts, full.num_experts);
  EXPECT_EQ(c->linear_attn.full_attn_layers, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c->linear_attn.kda_layers, (std::vector<int64_t>{1, 2, 3, 5, 6, 7}));

  const K3SizeReport r = ComputeK3Sizes(*c);
  EXPECT_GT(r.total.bytes, 36e9);
  EXPECT_LT(r.total.bytes, 41e9);  // with activations and caches, about 40 GB of the card
}

TEST(GpuBenchPresets, UnknownNameIsNotFound) {
  EXPECT_EQ(GpuBenchPreset("k3-mini").status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace kimi::gpu
