#include "io/k3_presets.h"

namespace kimi {
namespace {

// 1-based layer lists for a model whose every `period`-th layer (and the last) is MLA.
void SetLayerPattern(K3Config& c, int64_t period) {
  c.linear_attn.kda_layers.clear();
  c.linear_attn.full_attn_layers.clear();
  for (int64_t l = 1; l <= c.num_hidden_layers; ++l) {
    if (l % period == 0 || l == c.num_hidden_layers) {
      c.linear_attn.full_attn_layers.push_back(l);
    } else {
      c.linear_attn.kda_layers.push_back(l);
    }
  }
}

// What every K3 variant shares with the published model.
K3Config Common() {
  K3Config c;
  c.model_type = "kimi_k3";
  c.text_model_type = "kimi_linear";
  c.rms_norm_eps = 1e-5;
  c.tie_word_embeddings = false;
  c.mla_use_nope = true;
  c.mla_use_output_gate = true;
  c.linear_attn.gate_lower_bound = -5.0;
  c.linear_attn.use_full_rank_gate = true;
  c.linear_attn.short_conv_kernel_size = 4;
  c.first_k_dense_replace = 1;
  c.moe_layer_freq = 1;
  c.latent_moe_use_norm = true;
  c.moe_renormalize = true;
  c.moe_router_activation_func = "sigmoid";
  c.use_grouped_topk = true;
  c.num_expert_group = 1;
  c.topk_group = 1;
  c.routed_scaling_factor = 1.0;
  c.hidden_act = "situ";
  c.activation_situ_beta = 4.0;
  c.activation_situ_linear_beta = 25.0;
  c.quantization.present = true;
  c.quantization.quant_method = "compressed-tensors";
  c.quantization.format = std::string(kMxfp4PackFormat);
  // As published: every Linear but the routed experts is left in BF16.
  c.quantization.ignore = {"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\..*",
                           "re:.*block_sparse_moe\\.gate$", "re:.*routed_expert_.*"};
  QuantizationGroup experts;
  experts.name = "group_0";
  experts.format = c.quantization.format;
  experts.targets = {"Linear"};
  c.quantization.groups = {experts};
  return c;
}

K3Config Nano() {
  K3Config c = Common();
  SetK3Vocabulary(c, kTinyOrdinaryVocab);
  c.hidden_size = 128;
  c.num_hidden_layers = 6;
  c.max_position_embeddings = 4096;
  SetLayerPattern(c, 4);  // KDA 1,2,3,5; MLA 4,6
  // Six KDA heads: A_log is stored padded to 8 like the published [128]-for-96.
  c.linear_attn.num_heads = 6;
  c.linear_attn.head_dim = 32;
  c.num_attention_heads = 6;
  c.num_key_value_heads = 6;
  c.q_lora_rank = 96;
  c.kv_lora_rank = 64;
  c.qk_nope_head_dim = 32;
  c.qk_rope_head_dim = 16;
  c.v_head_dim = 32;
  c.intermediate_size = 384;
  c.num_experts = 16;
  c.num_experts_per_token = 4;
  c.num_shared_experts = 2;
  c.moe_intermediate_size = 96;
  c.routed_expert_hidden_size = 64;
  c.attn_res_block_size = 2;
  return c;
}

K3Config Mini() {
  K3Config c = Common();
  SetK3Vocabulary(c, kTinyOrdinaryVocab);
  c.hidden_size = 1024;
  c.num_hidden_layers = 8;
  c.max_position_embeddings = 32768;
  SetLayerPattern(c, 4);  // KDA 1,2,3,5,6,7; MLA 4,8
  c.linear_attn.num_heads = 12;
  c.linear_attn.head_dim = 128;
  c.num_attention_heads = 12;
  c.num_key_value_heads = 12;
  c.q_lora_rank = 768;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.intermediate_size = 4096;
  c.num_experts = 64;
  c.num_experts_per_token = 8;
  c.num_shared_experts = 2;
  c.moe_intermediate_size = 256;
  c.routed_expert_hidden_size = 512;
  c.attn_res_block_size = 4;
  return c;
}

// The published Kimi K3 text configuration.
K3Config FullShape() {
  K3Config c = Common();
  SetK3Vocabulary(c, kK3SpecialTokenBase);  // 163,840 ids
  c.hidden_size = 7168;
  c.num_hidden_layers = 93;
  c.max_position_embeddings = 1048576;
  SetLayerPattern(c, 4);  // full attention at 4, 8, ..., 92 and 93
  c.linear_attn.num_heads = 96;
  c.linear_attn.head_dim = 128;
  c.num_attention_heads = 96;
  c.num_key_value_heads = 96;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.intermediate_size = 33792;
  c.num_experts = 896;
  c.num_experts_per_token = 16;
  c.num_shared_experts = 2;
  c.moe_intermediate_size = 3072;
  c.routed_expert_hidden_size = 3584;
  c.attn_res_block_size = 12;
  return c;
}

// The published widths at a size one machine can hold: every matrix has its published shape
// (hidden 7168, 96×128 KDA heads, 896 MXFP4 experts of 3584→3072, two shared experts, latent
// projections 7168↔3584), with the 4352-id vocabulary of nano and mini because the embedding
// and lm_head are no measured kernel. One MoE layer with all 896 experts is 16.10 GB (routed
// experts 15.72 GB, shared experts, latent projections, router), so the 16 GiB budget
// (kK3WideBudgetBytes) holds one decoder layer: KDA attention (0.89 GB, the largest part of
// full K3's bytes per token) over that MoE, 17.12 GB in all. Left out, because a second
// attention block or the dense MLP no longer fits: MLA attention (0.46 GB per layer) and the
// dense MLP of the published layer 1 (1.45 GB); hence first_k_dense_replace 0.
K3Config Wide() {
  K3Config c = FullShape();
  SetK3Vocabulary(c, kTinyOrdinaryVocab);
  c.num_hidden_layers = 1;
  c.linear_attn.kda_layers = {1};
  c.linear_attn.full_attn_layers.clear();
  c.first_k_dense_replace = 0;
  return c;
}

}  // namespace

void SetK3Vocabulary(K3Config& c, int64_t ordinary_tokens) {
  c.vocab_size = ordinary_tokens + kK3SpecialTokenCount;
  c.bos_token_id = ordinary_tokens + 0;    // [BOS]
  c.eos_token_id = ordinary_tokens + 2;    // <|im_end|> / <|end_of_msg|>
  c.pad_token_id = ordinary_tokens + 255;  // [PAD]
}

Result<K3Config> K3Preset(std::string_view name) {
  if (name == "k3-nano") return Nano();
  if (name == "k3-mini") return Mini();
  if (name == "k3-wide") return Wide();
  if (name == "k3-full-shape") return FullShape();
  std::string known;
  for (const auto& n : K3PresetNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> K3PresetNames() { return {"k3-nano", "k3-mini", "k3-wide", "k3-full-shape"}; }

bool K3PresetIsShapeOnly(std::string_view name) { return name == "k3-full-shape"; }

}  // namespace kimi
