// Attention residuals (Block AttnRes, docs/engine.md "Decoder layer with attention residuals"):
// the input of each sub-layer is a softmax mixture over depth of the block snapshots and the
// current block's partial sum, weighted per token by a learned vector.
//
// Thread safety: the weights are immutable; Mix is reentrant.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/weight_binder.h"

namespace kimi::model {

// One mixing site (`self_attention_res`, `mlp_res` or `output_attn_res`).
struct AttnResWeights {
  std::vector<float> norm_times_proj;  // [D]: *_res_norm.weight ⊙ *_res_proj.weight

  // Binds `stem`_norm.weight [D] and `stem`_proj.weight [1, D].
  void Bind(WeightBinder& binder, const std::string& stem, int64_t D);
};

// out[r] = Σ_c α_c(r) · c[r] over candidates c ∈ {blocks..., partial}, with
//   α(r) = softmax_c( c[r] · w / sqrt(mean(c[r]²) + eps) ).
// blocks: each [R, D]; partial, out: [R, D]. With no blocks, out = partial. out may not alias.
void MixDepth(std::span<const float* const> blocks, const float* partial, const AttnResWeights& w,
              int64_t R, int64_t D, float eps, float* out);

}  // namespace kimi::model
