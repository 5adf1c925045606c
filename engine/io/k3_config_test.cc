#include "kimi/config.h"

#include <gtest/gtest.h>

#include "io/k3_presets.h"

namespace kimi {
namespace {

// The published Kimi K3 config.json, trimmed to its text part (values as Moonshot ships them).
constexpr const char* kPublished = R"({
  "architectures": ["KimiK3ForConditionalGeneration"],
  "bos_token_id": 163584, "eos_token_id": 163586, "pad_token_id": 163839,
  "model_type": "kimi_k3", "tie_word_embeddings": false,
  "text_config": {
    "activation_situ_beta": 4.0, "activation_situ_linear_beta": 25.0, "attn_res_block_size": 12,
    "first_k_dense_replace": 1, "hidden_act": "situ", "hidden_size": 7168, "intermediate_size": 33792,
    "kv_lora_rank": 512, "latent_moe_use_norm": true,
    "linear_attn_config": {
      "full_attn_layers": [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 93],
      "gate_lower_bound": -5.0, "head_dim": 128,
      "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26, 27, 29, 30, 31, 33, 34, 35,
                     37, 38, 39, 41, 42, 43, 45, 46, 47, 49, 50, 51, 53, 54, 55, 57, 58, 59, 61, 62, 63, 65, 66, 67, 69,
                     70, 71, 73, 74, 75, 77, 78, 79, 81, 82, 83, 85, 86, 87, 89, 90, 91],
      "num_heads": 96, "short_conv_kernel_size": 4, "use_full_rank_gate": true},
    "max_position_embeddings": 1048576, "mla_use_nope": true, "mla_use_output_gate": true,
    "model_type": "kimi_linear", "moe_intermediate_size": 3072, "moe_layer_freq": 1, "moe_renormalize": true,
    "moe_router_activation_func": "sigmoid", "num_attention_heads": 96, "num_expert_group": 1, "num_experts": 896,
    "num_experts_per_token": 16, "num_hidden_layers": 93, "num_key_value_heads": 96, "num_nextn_predict_layers": 0,
    "num_shared_experts": 2, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "quantization_config": {"format": "mxfp4-pack-quantized", "quant_method": "compressed-tensors"},
    "rms_norm_eps": 1e-05, "routed_expert_hidden_size": 3584, "routed_scaling_factor": 1.0,
    "tie_word_embeddings": false, "topk_group": 1, "use_grouped_topk": true, "v_head_dim": 128, "vocab_size": 163840
  }
})";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Parsing must fail with `code`, naming `key` and the file.
void ExpectRejected(const std::string& text, const std::string& key,
                    Status::Code code = Status::Code::kInvalidArgument) {
  auto r = ParseK3Config(text, "config.json");
  ASSERT_FALSE(r.ok()) << "accepted a config with a bad " << key;
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find("config.json"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().ToString();
}

TEST(K3Config, ParsesThePublishedConfig) {
  auto r = ParseK3Config(kPublished, "config.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const K3Config& c = *r;
  EXPECT_EQ(c.model_type, "kimi_k3");
  EXPECT_EQ(c.text_model_type, "kimi_linear");
  EXPECT_EQ(c.hidden_size, 7168);
  EXPECT_EQ(c.num_hidden_layers, 93);
  EXPECT_EQ(c.vocab_size, 163840);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.num_experts, 896);
  EXPECT_EQ(c.num_experts_per_token, 16);
  EXPECT_EQ(c.num_shared_experts, 2);
  EXPECT_EQ(c.intermediate_size, 33792);
  EXPECT_EQ(c.ExpertInputDim(), 3584);
  EXPECT_EQ(c.SharedExpertWidth(), 6144);
  EXPECT_DOUBLE_EQ(c.activation_situ_beta, 4.0);
  EXPECT_DOUBLE_EQ(*c.activation_situ_linear_beta, 25.0);
  EXPECT_EQ(c.attn_res_block_size, 12);
  EXPECT_DOUBLE_EQ(*c.linear_attn.gate_lower_bound, -5.0);
  EXPECT_TRUE(c.linear_attn.use_full_rank_gate);
  EXPECT_TRUE(c.ExpertsMxfp4());
  EXPECT_EQ(c.eos_token_id, 163586);
  EXPECT_EQ(c.MlaCacheValuesPerToken(), 576);
  EXPECT_EQ(c.KdaProjectionDim(), 12288);
  EXPECT_EQ(c.ALogStoredLength(), 128);
  // The lists are 1-based: layer 0 is KDA (1 in kda_layers), layer 3 is MLA (4 in full_attn_layers).
  EXPECT_TRUE(c.IsKdaLayer(0));
  EXPECT_FALSE(c.IsKdaLayer(3));
  EXPECT_TRUE(c.IsKdaLayer(90));
  EXPECT_FALSE(c.IsKdaLayer(91));
  EXPECT_FALSE(c.IsKdaLayer(92));
  EXPECT_EQ(c.NumKdaLayers(), 69);
  EXPECT_EQ(c.NumMlaLayers(), 24);
  EXPECT_FALSE(c.IsMoeLayer(0));
  EXPECT_TRUE(c.IsMoeLayer(1));
  EXPECT_EQ(c.NumMoeLayers(), 92);
}

TEST(K3Config, MatchesTheFullShapePreset) {
  auto published = ParseK3Config(kPublished, "config.json");
  auto preset = K3Preset("k3-full-shape");
  ASSERT_TRUE(published.ok() && preset.ok());
  auto reparsed = ParseK3Config(K3ConfigToJson(*preset), "synth");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  for (const K3Config* c : {&*preset, &*reparsed}) {
    EXPECT_EQ(c->linear_attn.kda_layers, published->linear_attn.kda_layers);
    EXPECT_EQ(c->linear_attn.full_attn_layers, published->linear_attn.full_attn_layers);
    EXPECT_EQ(c->q_lora_rank, published->q_lora_rank);
    EXPECT_EQ(c->moe_intermediate_size, published->moe_intermediate_size);
    EXPECT_EQ(c->routed_expert_hidden_size, published->routed_expert_hidden_size);
    EXPECT_EQ(c->pad_token_id, published->pad_token_id);
    EXPECT_EQ(c->mla_use_output_gate, published->mla_use_output_gate);
    EXPECT_EQ(c->latent_moe_use_norm, published->latent_moe_use_norm);
  }
}

TEST(K3Config, AcceptsATopLevelConfigAndDeepSeekAliases) {
  std::string flat = R"({"model_type":"kimi_linear","hidden_size":64,"num_hidden_layers":2,"vocab_size":300,
    "rms_norm_eps":1e-5,"num_attention_heads":2,"kv_lora_rank":32,"qk_nope_head_dim":16,"qk_rope_head_dim":8,
    "v_head_dim":16,"intermediate_size":128,"n_routed_experts":4,"num_experts_per_tok":2,"n_shared_experts":1,
    "moe_intermediate_size":32,"first_k_dense_replace":1,"hidden_act":"situ",
    "linear_attn_config":{"kda_layers":[1],"full_attn_layers":[2],"num_heads":2,"head_dim":16,"short_conv_kernel_size":4}})";
  auto r = ParseK3Config(flat, "flat.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_experts, 4);
  EXPECT_EQ(r->num_experts_per_token, 2);
  EXPECT_EQ(r->num_shared_experts, 1);
  EXPECT_FALSE(r->linear_attn.gate_lower_bound.has_value());
  EXPECT_FALSE(r->ExpertsMxfp4());
  EXPECT_TRUE(r->IsKdaLayer(0));
  EXPECT_FALSE(r->IsKdaLayer(1));
}

TEST(K3Config, NamesTheKeyOfEveryError) {
  ExpectRejected(Replace(kPublished, R"("hidden_size": 7168,)", ""), "text_config.hidden_size");
  ExpectRejected(Replace(kPublished, R"("hidden_size": 7168)", R"("hidden_size": "7168")"), "text_config.hidden_size");
  ExpectRejected(Replace(kPublished, R"("hidden_size": 7168)", R"("hidden_size": 0)"), "hidden_size");
  ExpectRejected(Replace(kPublished, R"("kda_layers": [1, 2,)", R"("kda_layers": [0, 2,)"), "kda_layers");
  ExpectRejected(Replace(kPublished, R"("kda_layers": [1, 2,)", R"("kda_layers": [4, 2,)"), "full_attn_layers");
  ExpectRejected(Replace(kPublished, R"("kda_layers": [1, 2,)", R"("kda_layers": [2,)"), "linear_attn_config");
  ExpectRejected(Replace(kPublished, R"("num_experts_per_token": 16)", R"("num_experts_per_token": 897)"),
                 "num_experts_per_token");
  ExpectRejected(Replace(kPublished, R"("hidden_act": "situ")", R"("hidden_act": "silu")"), "hidden_act",
                 Status::Code::kUnimplemented);
  ExpectRejected(Replace(kPublished, R"("mla_use_nope": true)", R"("mla_use_nope": false)"), "mla_use_nope",
                 Status::Code::kUnimplemented);
  ExpectRejected(Replace(kPublished, R"("format": "mxfp4-pack-quantized")", R"("format": "nvfp4-pack-quantized")"),
                 "quantization_config.format", Status::Code::kUnimplemented);
  ExpectRejected(Replace(kPublished, R"("moe_intermediate_size": 3072)", R"("moe_intermediate_size": 3000)"),
                 "moe_intermediate_size");
  ExpectRejected(Replace(kPublished, R"("num_heads": 96)", R"("num_heads": -96)"), "linear_attn_config.num_heads");
  ExpectRejected(Replace(kPublished, R"("rms_norm_eps": 1e-05)", R"("rms_norm_eps": true)"), "rms_norm_eps");
  ExpectRejected(Replace(kPublished, R"("num_key_value_heads": 96)", R"("num_key_value_heads": 8)"),
                 "num_key_value_heads");
}

TEST(K3Config, RejectsTextThatIsNotAConfig) {
  EXPECT_EQ(ParseK3Config("{", "c.json").status().code(), Status::Code::kCorruption);
  EXPECT_EQ(ParseK3Config("[]", "c.json").status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(ParseK3Config(std::string(5000, '[') + std::string(5000, ']'), "c.json").ok());
  EXPECT_EQ(LoadK3Config("/nonexistent/config.json").status().code(), Status::Code::kNotFound);
}

TEST(K3Config, PresetsRoundTripThroughJson) {
  for (const auto& name : K3PresetNames()) {
    auto preset = K3Preset(name);
    ASSERT_TRUE(preset.ok()) << name;
    auto r = ParseK3Config(K3ConfigToJson(*preset), name);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    EXPECT_EQ(K3ConfigToJson(*r), K3ConfigToJson(*preset)) << name;
  }
  EXPECT_EQ(K3Preset("k3-huge").status().code(), Status::Code::kNotFound);
}

TEST(K3Config, TinyPresetsKeepTheSpecialIdsAtTheirRelativePositions) {
  for (const char* name : {"k3-nano", "k3-mini"}) {
    auto c = K3Preset(name);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->vocab_size, 4096 + 256) << name;
    EXPECT_EQ(c->bos_token_id - 4096, 163584 - kK3SpecialTokenBase);
    EXPECT_EQ(c->eos_token_id - 4096, 163586 - kK3SpecialTokenBase);
    EXPECT_EQ(c->pad_token_id - 4096, 163839 - kK3SpecialTokenBase);
    EXPECT_GE(c->NumMlaLayers(), 1);
    EXPECT_GE(c->NumKdaLayers(), 1);
    EXPECT_FALSE(c->IsMoeLayer(0));  // the dense layer 0
  }
}

}  // namespace
}  // namespace kimi
