// The K3 forward pass, top to bottom: embedding, the decoder layers with attention residuals,
// the output mixture, the final norm and lm_head (docs/engine.md "Top to bottom").
#include "model/k3_model.h"

#include <cstring>

#include "core/float_mode.h"
#include "kimi/dtype.h"
#include "kernels/cpu/kernels.h"

namespace kimi {

using model::Reserve;

void Model::Impl::Forward(std::span<const int32_t> tokens, model::Segments segments,
                          std::span<const int64_t> logit_rows, float* logits) {
  const K3Config& c = config;
  const model::ModelWeights& w = weights;
  model::Activations& a = act;
  ThreadPool* tp = pool.get();
  // The kernels that run on this thread outside a parallel region get the pool's mode too.
  const ScopedSubnormals subnormals(tp->subnormals());
  const int64_t R = static_cast<int64_t>(tokens.size()), D = c.hidden_size, V = c.vocab_size;
  const float eps = float(c.rms_norm_eps);
  const int64_t block = c.attn_res_block_size;
  const model::KdaDims kda_dims(c);
  const model::MlaDims mla_dims(c);
  const model::SituParams situ(c);

  float* partial = Reserve(a.partial, R * D);
  float* mixed = Reserve(a.mixed, R * D);
  float* normed = Reserve(a.normed, R * D);
  float* out = Reserve(a.out, R * D);
  std::vector<const float*> blocks;

  // x = embed_tokens[id] (BF16 rows).
  for (int64_t r = 0; r < R; ++r) {
    const uint16_t* row = w.embed.Row(tokens[r]);
    for (int64_t i = 0; i < D; ++i) partial[r * D + i] = Bf16ToF32(row[i]);
  }

  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const model::LayerWeights& layer = w.layers[i];
    bool block_start = false;
    // Attention input: depth mixture of the snapshots and the partial sum; a block start then
    // turns the partial sum into a snapshot.
    if (block > 0) {
      model::MixDepth(blocks, partial, layer.attn_res, R, D, eps, mixed);
      if (i % block == 0) {
        if (a.blocks.size() <= blocks.size()) a.blocks.emplace_back();
        float* snapshot = Reserve(a.blocks[blocks.size()], R * D);
        std::memcpy(snapshot, partial, sizeof(float) * R * D);
        blocks.push_back(snapshot);
        block_start = true;
      }
    } else {
      std::memcpy(mixed, partial, sizeof(float) * R * D);
    }

    // Mixer (KDA or Gated MLA) on the input-normed mixture: the only cross-token step.
    kernels::RmsNorm(mixed, layer.input_norm.data(), R, D, eps, normed, tp);
    if (layer.is_kda) {
      model::KdaForward(layer.kda, kda_dims, normed, R, segments, layer.slot, a.kda, out, tp);
    } else {
      model::MlaForward(layer.mla, mla_dims, normed, R, segments, layer.slot, a.mla, out, tp);
    }
    if (block_start) {
      std::memcpy(partial, out, sizeof(float) * R * D);
    } else {
      for (int64_t j = 0; j < R * D; ++j) partial[j] += out[j];
    }

    // FFN input: mixture with the mlp_res weights, post-attention norm, MLP or MoE; residual add.
    if (block > 0) {
      model::MixDepth(blocks, partial, layer.mlp_res, R, D, eps, mixed);
    } else {
      std::memcpy(mixed, partial, sizeof(float) * R * D);
    }
    kernels::RmsNorm(mixed, layer.post_norm.data(), R, D, eps, normed, tp);
    if (layer.is_moe) {
      model::MoeForward(layer.moe, c, situ, normed, R, a.ffn, out, tp);
    } else {
      model::SituMlpForward(layer.mlp, situ, normed, R, a.ffn, out, tp);
    }
    for (int64_t j = 0; j < R * D; ++j) partial[j] += out[j];
  }

  // Output mixture over depth, final norm, lm_head on the rows that want logits.
  if (block > 0) {
    model::MixDepth(blocks, partial, w.output_res, R, D, eps, mixed);
  } else {
    std::memcpy(mixed, partial, sizeof(float) * R * D);
  }
  const int64_t n = static_cast<int64_t>(logit_rows.size());
  if (n == 0) return;  // a prefill piece before the last one, when only the last row is wanted
  float* head_in = Reserve(a.head_in, n * D);
  for (int64_t j = 0; j < n; ++j) std::memcpy(head_in + j * D, mixed + logit_rows[j] * D, sizeof(float) * D);
  kernels::RmsNorm(head_in, w.final_norm.data(), n, D, eps, head_in, tp);
  kernels::MatmulBf16(head_in, D, w.lm_head.w, n, V, D, logits, V, tp);
}

}  // namespace kimi
