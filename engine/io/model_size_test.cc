#include "kimi/model_size.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "io/k3_presets.h"
#include "io/k3_quantize.h"
#include "kimi/k3_tensors.h"

namespace kimi {
namespace {

constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;

K3Config Preset(const char* name) {
  auto c = K3Preset(name);
  EXPECT_TRUE(c.ok()) << name;
  return *c;
}

// The closed form and the tensor table are written independently; every group must agree.
void ExpectTableMatchesArithmetic(const K3Config& c) {
  K3SizeReport r = ComputeK3Sizes(c);
  std::array<ComponentSize, kNumTensorGroups> table{};
  ForEachK3Tensor(c, [&](const TensorSpec& s) {
    table[static_cast<int>(s.group)].params += s.params;
    table[static_cast<int>(s.group)].bytes += s.bytes();
  });
  for (int g = 0; g < kNumTensorGroups; ++g) {
    EXPECT_EQ(table[g].params, r.groups[g].params) << TensorGroupName(static_cast<TensorGroup>(g));
    EXPECT_EQ(table[g].bytes, r.groups[g].bytes) << TensorGroupName(static_cast<TensorGroup>(g));
  }
}

TEST(ModelSize, FullShapeMatchesThePublishedModel) {
  K3Config c = Preset("k3-full-shape");
  K3SizeReport r = ComputeK3Sizes(c);
  // Routed experts, by hand: 92 MoE layers x 896 experts x 3 matrices of 3072 x 3584, stored as
  // half a byte per element plus one scale byte per 32 elements.
  const uint64_t expert_elems = 92ull * 896 * 3 * 3072 * 3584;
  EXPECT_EQ(r.group(TensorGroup::kRoutedExperts).params, expert_elems);
  EXPECT_EQ(r.group(TensorGroup::kRoutedExperts).bytes, expert_elems / 2 + expert_elems / 32);
  EXPECT_EQ(r.group(TensorGroup::kEmbedding).params, 163840ull * 7168);
  EXPECT_EQ(r.group(TensorGroup::kDenseMlp).params, 3ull * 33792 * 7168);
  // About 2.78 T parameters in about 1.4 TiB.
  EXPECT_GT(r.total.params, 2.75e12);
  EXPECT_LT(r.total.params, 2.80e12);
  EXPECT_GT(r.total.bytes / kTiB, 1.35);
  EXPECT_LT(r.total.bytes / kTiB, 1.45);
  EXPECT_EQ(r.kda_layers, 69);
  EXPECT_EQ(r.mla_layers, 24);
  EXPECT_EQ(r.moe_layers, 92);
  // The MLA cache holds 512 + 64 = 576 values per token per MLA layer.
  EXPECT_EQ(r.mla_cache_values_per_token, 576ull * 24);
  EXPECT_EQ(r.MlaCacheBytesPerToken(2), 576ull * 24 * 2);
  // KDA: one fp32 128x128 state per head, 96 heads, 69 layers; conv keeps 3 of 4 taps of q, k, v.
  EXPECT_EQ(r.kda_recurrent_state_bytes, 69ull * 96 * 128 * 128 * 4);
  EXPECT_EQ(r.kda_conv_state_bytes, 69ull * 3 * 12288 * 3 * 4);
  // Decoding reads 16 of 896 experts per layer: the bytes per token are a small fraction.
  const uint64_t one_expert_bytes = 3ull * (3072 * 3584 / 2 + 3072 * 3584 / 32);
  const uint64_t dense = r.total.bytes - r.group(TensorGroup::kRoutedExperts).bytes -
                         r.group(TensorGroup::kEmbedding).bytes;
  EXPECT_EQ(r.weight_bytes_per_token, dense + 7168 * 2 + 92ull * 16 * one_expert_bytes);
  EXPECT_GT(r.active_params_per_token, 50e9);
  EXPECT_LT(r.active_params_per_token, 150e9);
  ExpectTableMatchesArithmetic(c);

  // By part: the routed experts are 16 of 896 per layer, every dense part is read whole, and
  // the parts add up to the total. On CPU servers the BF16 dense weights dominate: KDA alone
  // reads more than the routed experts.
  uint64_t sum = 0;
  for (uint64_t bytes : r.bytes_per_token_by_group) sum += bytes;
  EXPECT_EQ(sum, r.weight_bytes_per_token);
  auto part = [&](TensorGroup g) { return r.bytes_per_token_by_group[static_cast<int>(g)]; };
  EXPECT_EQ(part(TensorGroup::kRoutedExperts), 92ull * 16 * one_expert_bytes);
  EXPECT_EQ(part(TensorGroup::kEmbedding), 7168ull * 2);
  EXPECT_EQ(part(TensorGroup::kKdaAttention), r.group(TensorGroup::kKdaAttention).bytes);
  EXPECT_EQ(part(TensorGroup::kSharedExperts), r.group(TensorGroup::kSharedExperts).bytes);
  EXPECT_GT(part(TensorGroup::kKdaAttention), 2 * part(TensorGroup::kRoutedExperts));

  // 137 GB per token at 600 GB/s: 4.38 tokens/s at most.
  const std::string text = FormatDecodeBytes(r, 600);
  EXPECT_NE(text.find("routed experts"), std::string::npos) << text;
  EXPECT_NE(text.find("at most 4.38 tokens/s"), std::string::npos) << text;
  EXPECT_EQ(FormatDecodeBytes(r, 0).find("tokens/s"), std::string::npos);
}

TEST(ModelSize, TablesAgreeForEveryPresetAndVariant) {
  for (const char* name : {"k3-nano", "k3-mini", "k3-wide"}) ExpectTableMatchesArithmetic(Preset(name));
  K3Config v = Preset("k3-nano");
  v.linear_attn.use_full_rank_gate = false;
  v.tie_word_embeddings = true;
  v.quantization.present = false;
  v.q_lora_rank = 0;
  v.attn_res_block_size = 0;
  v.latent_moe_use_norm = false;
  ASSERT_TRUE(ValidateK3Config(v, "variant: ").ok());
  ExpectTableMatchesArithmetic(v);
  K3SizeReport r = ComputeK3Sizes(v);
  EXPECT_EQ(r.group(TensorGroup::kLmHead).params, 0u);
  EXPECT_EQ(r.group(TensorGroup::kAttnResidual).params, 0u);
}

// With the dense projections quantised (the configs kimi-engine quantize writes) the two still
// agree, and a decoded token reads fewer bytes.
TEST(ModelSize, TablesAgreeWithQuantisedDenseProjections) {
  K3Config low_rank = Preset("k3-nano");
  low_rank.linear_attn.use_full_rank_gate = false;
  low_rank.q_lora_rank = 0;
  for (K3Config c : {Preset("k3-nano"), Preset("k3-mini"), low_rank}) {
    const uint64_t bf16_bytes = ComputeK3Sizes(c).weight_bytes_per_token;
    for (QuantScheme scheme : {QuantScheme::kInt8, QuantScheme::kMxfp4Dense}) {
      c.quantization = QuantizedDenseConfig(Preset("k3-nano").quantization, scheme);
      ASSERT_TRUE(ValidateK3Config(c, "quantised: ").ok());
      ExpectTableMatchesArithmetic(c);
      EXPECT_LT(ComputeK3Sizes(c).weight_bytes_per_token, bf16_bytes);
    }
  }
}

TEST(ModelSize, PresetsHaveTheirAdvertisedSizes) {
  K3SizeReport nano = ComputeK3Sizes(Preset("k3-nano"));
  EXPECT_GT(nano.total.params, 1'000'000u);
  EXPECT_LT(nano.total.params, 10'000'000u);
  K3SizeReport mini = ComputeK3Sizes(Preset("k3-mini"));
  EXPECT_GE(mini.total.params, 200'000'000u);
  EXPECT_LE(mini.total.params, 400'000'000u);
  EXPECT_GE(Preset("k3-mini").num_experts, 64);
}

// k3-wide: every tensor has the dtype and shape of its published counterpart (its one layer is
// a KDA + MoE layer like the published layer 2; only the vocabulary rows of the embedding and
// lm_head differ), the whole fits the 16 GiB budget, and nothing left out would still fit.
TEST(ModelSize, WideHasPublishedShapesWithinItsBudget) {
  const K3Config wide = Preset("k3-wide"), full = Preset("k3-full-shape");
  std::map<std::string, TensorSpec> published;
  ForEachK3Tensor(full, [&](const TensorSpec& s) {
    if (s.layer <= 1) published[s.name] = s;
  });
  const std::string layer0 = "model.layers.0.", layer1 = "model.layers.1.";
  uint64_t bytes = 0, experts = 0, compared = 0;
  ForEachK3Tensor(wide, [&](const TensorSpec& s) {
    bytes += s.bytes();
    if (s.group == TensorGroup::kRoutedExperts && s.name.ends_with(".weight_packed")) ++experts;
    std::string name = s.name;
    if (name.starts_with(layer0)) name = layer1 + name.substr(layer0.size());
    auto it = published.find(name);
    ASSERT_NE(it, published.end()) << s.name << " has no published counterpart";
    EXPECT_EQ(s.dtype, it->second.dtype) << s.name;
    if (s.group == TensorGroup::kEmbedding || s.group == TensorGroup::kLmHead) {
      EXPECT_EQ(s.shape, (std::vector<int64_t>{wide.vocab_size, 7168})) << s.name;
    } else {
      EXPECT_EQ(s.shape, it->second.shape) << s.name;
    }
    ++compared;
  });
  EXPECT_GT(compared, 2700u);
  EXPECT_EQ(experts, 3u * 896);
  EXPECT_LE(bytes, kK3WideBudgetBytes);
  EXPECT_EQ(bytes, ComputeK3Sizes(wide).total.bytes);

  // The cheapest published part left out (one MLA attention block; the dense MLP is larger)
  // would overflow the budget.
  const K3SizeReport full_sizes = ComputeK3Sizes(full);
  const uint64_t mla_layer = full_sizes.group(TensorGroup::kMlaAttention).bytes / uint64_t(full_sizes.mla_layers);
  EXPECT_LT(mla_layer, full_sizes.group(TensorGroup::kDenseMlp).bytes);
  EXPECT_GT(bytes + mla_layer, kK3WideBudgetBytes);
}

TEST(ModelSize, FormatsReadably) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(FormatCount(2'780'000'000'000ull), "2.780 T");
  std::string report = FormatSizeReport(Preset("k3-nano"), ComputeK3Sizes(Preset("k3-nano")));
  EXPECT_NE(report.find("routed experts"), std::string::npos);
  EXPECT_NE(report.find("weight bytes read per token"), std::string::npos);
}

}  // namespace
}  // namespace kimi
