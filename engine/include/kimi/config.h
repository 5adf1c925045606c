// The Kimi K3 model configuration: every size the engine uses, read from the published
// `config.json` (top level, or nested under `text_config` as Moonshot ships it; the text model's
// model_type is `kimi_linear`). Nothing about the architecture is hard-coded elsewhere.
//
// Key names follow the published config (num_experts, num_experts_per_token, num_shared_experts,
// routed_expert_hidden_size, activation_situ_beta, ...); DeepSeek-style aliases
// (n_routed_experts, n_shared_experts, num_experts_per_tok) are accepted when the published key
// is absent. Validation names the offending key.
//
// Thread safety: K3Config is a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/quantization.h"
#include "kimi/status.h"

namespace kimi {

// Kimi Delta Attention settings (`linear_attn_config`). Layer lists are 1-based, as published.
struct LinearAttnConfig {
  std::vector<int64_t> kda_layers;        // 1-based
  std::vector<int64_t> full_attn_layers;  // 1-based
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t short_conv_kernel_size = 0;
  std::optional<double> gate_lower_bound;  // absent or null: no lower bound
  bool use_full_rank_gate = false;
};

enum class AttentionKind { kKda, kMla };

struct K3Config {
  std::string model_type = "kimi_k3";       // the top-level model_type
  std::string text_model_type = "kimi_linear";

  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t vocab_size = 0;
  double rms_norm_eps = 1e-5;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  int64_t bos_token_id = -1;
  int64_t eos_token_id = -1;
  int64_t pad_token_id = -1;

  // Gated MLA (full-attention layers). Only the NoPE form is supported.
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t q_lora_rank = 0;  // 0: q_proj straight from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool mla_use_nope = true;
  bool mla_use_output_gate = false;

  LinearAttnConfig linear_attn;

  // MLPs and the latent MoE.
  int64_t intermediate_size = 0;  // the dense MLP of layers < first_k_dense_replace
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  int64_t num_shared_experts = 0;
  int64_t moe_intermediate_size = 0;
  int64_t routed_expert_hidden_size = 0;  // 0: experts work in hidden_size space
  bool latent_moe_use_norm = false;
  int64_t first_k_dense_replace = 0;
  int64_t moe_layer_freq = 1;
  double routed_scaling_factor = 1.0;
  bool moe_renormalize = true;
  std::string moe_router_activation_func = "sigmoid";
  bool use_grouped_topk = true;
  int64_t num_expert_group = 1;
  int64_t topk_group = 1;

  // SiTU activation.
  std::string hidden_act = "situ";
  double activation_situ_beta = 1.0;
  std::optional<double> activation_situ_linear_beta;

  int64_t attn_res_block_size = 0;  // 0: plain residuals, no attention residuals

  QuantizationConfig quantization;

  // Derived helpers. Layer indices are 0-based.
  AttentionKind LayerAttention(int64_t layer) const;
  bool IsKdaLayer(int64_t layer) const { return LayerAttention(layer) == AttentionKind::kKda; }
  bool IsMoeLayer(int64_t layer) const;
  int64_t NumKdaLayers() const;
  int64_t NumMlaLayers() const { return num_hidden_layers - NumKdaLayers(); }
  int64_t NumMoeLayers() const;
  int64_t KdaProjectionDim() const { return linear_attn.num_heads * linear_attn.head_dim; }
  int64_t MlaQHeadDim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  int64_t MlaCacheValuesPerToken() const { return kv_lora_rank + qk_rope_head_dim; }
  // The width the routed experts work in: routed_expert_hidden_size, or hidden_size.
  int64_t ExpertInputDim() const { return routed_expert_hidden_size > 0 ? routed_expert_hidden_size : hidden_size; }
  int64_t SharedExpertWidth() const { return num_shared_experts * moe_intermediate_size; }
  bool ExpertsMxfp4() const { return quantization.HasMxfp4(); }
  // Entries stored in A_log: the head count rounded up to a power of two (the published
  // checkpoint ships [128] for 96 heads, the tail zero).
  int64_t ALogStoredLength() const;
};

// Parses config.json text; `label` (a path) prefixes every error. Validates every field.
Result<K3Config> ParseK3Config(std::string_view json_text, std::string_view label);
Result<K3Config> LoadK3Config(const std::string& path);

// Checks the cross-field rules (layer lists, divisibility for MXFP4, supported variants).
Status ValidateK3Config(const K3Config& config, std::string_view label);

// The config as a published-style config.json (nested under text_config), pretty-printed.
std::string K3ConfigToJson(const K3Config& config);

}  // namespace kimi
