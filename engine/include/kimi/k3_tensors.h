// The tensor table of a Kimi K3 checkpoint: every tensor's name, dtype and shape, derived from a
// K3Config alone. It is the one description of the weights that the synthetic-model writer, the
// size arithmetic, the model-directory check and the forward pass all share.
//
// Names are given without the published `language_model.` prefix ("model.layers.0.self_attn.
// q_proj.weight"); kPublishedPrefix is what the published checkpoint (and `synth`) puts in front.
// Shapes are torch Linear order [out, in]. Routed experts are MXFP4 (`weight_packed` U8
// [out, in/2], `weight_scale` U8 [out, in/32]) when the config carries a quantization_config,
// else a BF16 `weight`. The dense projections (KDA, MLA but kv_b_proj, dense and shared MLPs,
// latent projections) are BF16 unless the quantization_config puts them in a group
// (kimi/quantization.h). See docs/weights.md for the table in terms of config keys.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/config.h"
#include "kimi/dtype.h"

namespace kimi {

inline constexpr std::string_view kPublishedPrefix = "language_model.";

// What a tensor is for; the size report groups by it.
enum class TensorGroup {
  kEmbedding,
  kLmHead,
  kNorms,           // input/post-attention/final norms
  kAttnResidual,    // self_attention_res_*, mlp_res_*, output_attn_res_*
  kKdaAttention,
  kMlaAttention,
  kDenseMlp,
  kRouter,          // gate.weight, gate.e_score_correction_bias
  kLatentProjection,  // routed_expert_down_proj, routed_expert_up_proj, routed_expert_norm
  kSharedExperts,
  kRoutedExperts,
};
inline constexpr int kNumTensorGroups = 11;
std::string_view TensorGroupName(TensorGroup group);

struct TensorSpec {
  std::string name;  // without kPublishedPrefix
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
  TensorGroup group = TensorGroup::kNorms;
  int64_t layer = -1;   // -1 outside the decoder layers
  int64_t expert = -1;  // routed expert index, else -1
  // Logical parameters: for an MXFP4 weight_packed, the unpacked out·in; 0 for weight_scale.
  uint64_t params = 0;

  uint64_t bytes() const;
};

// Calls `fn` for every tensor of the checkpoint, in a fixed order: the embedding, then layer by
// layer, then the final norm, the output attention residual and lm_head.
// Precondition: ValidateK3Config(config) passed.
void ForEachK3Tensor(const K3Config& config, const std::function<void(const TensorSpec&)>& fn);

// An error naming the first dense matrix whose input width its quantised format cannot pack
// (4 for int8, 32 for MXFP4). Precondition: ValidateK3Config passed up to the quantization.
Status CheckQuantizedWidths(const K3Config& config);

// The same list, materialised (fine for small models; the full K3 has ~500k tensors).
std::vector<TensorSpec> K3TensorLayout(const K3Config& config);

}  // namespace kimi
