#include "kimi/k3_tensors.h"

#include <memory>

#include "kimi/quantization.h"
#include "kimi/safetensors.h"

namespace kimi {
namespace {

// Emits tensors with a common name prefix, layer and group.
class Emitter {
 public:
  Emitter(const K3Config& c, const std::function<void(const TensorSpec&)>& fn) : fn_(fn) {
    if (c.quantization.present) matcher_ = std::make_unique<QuantizationMatcher>(c.quantization);
  }

  void Set(std::string prefix, int64_t layer) {
    prefix_ = std::move(prefix);
    layer_ = layer;
  }

  void Emit(const std::string& leaf, DType dtype, std::vector<int64_t> shape, TensorGroup group,
            int64_t expert = -1, uint64_t params = UINT64_MAX) {
    spec_.name = prefix_ + leaf;
    spec_.dtype = dtype;
    spec_.shape = std::move(shape);
    spec_.group = group;
    spec_.layer = layer_;
    spec_.expert = expert;
    if (params == UINT64_MAX) {
      params = 1;
      for (int64_t d : spec_.shape) params *= static_cast<uint64_t>(d);
    }
    spec_.params = params;
    fn_(spec_);
  }

  void Linear(const std::string& leaf, int64_t out, int64_t in, TensorGroup group) {
    Emit(leaf + ".weight", DType::kBF16, {out, in}, group);
  }
  // A dense projection: BF16, or quantised as the config's groups say (kimi/quantization.h).
  void Dense(const std::string& leaf, int64_t out, int64_t in, TensorGroup group) {
    const MatrixFormat format = matcher_ ? matcher_->FormatOf(prefix_ + leaf) : MatrixFormat::kBf16;
    const int64_t block = format == MatrixFormat::kMxfp4 ? kMxfp4BlockSize : format == MatrixFormat::kInt8Channel ? 4 : 1;
    if (in % block != 0) {
      if (shape_error_.empty()) {
        shape_error_ = prefix_ + leaf + ": " + std::to_string(in) + " inputs are not a multiple of " + std::to_string(block) +
                       " (" + std::string(MatrixFormatName(format)) + ")";
      }
      return Linear(leaf, out, in, group);
    }
    const uint64_t params = static_cast<uint64_t>(out * in);
    switch (format) {
      case MatrixFormat::kBf16:
        return Linear(leaf, out, in, group);
      case MatrixFormat::kInt8Channel:
        Emit(leaf + ".weight_packed", DType::kI32, {out, in / 4}, group, -1, params);
        Emit(leaf + ".weight_scale", DType::kF32, {out, 1}, group, -1, 0);
        return Emit(leaf + ".weight_shape", DType::kI32, {2}, group, -1, 0);
      case MatrixFormat::kMxfp4:
        Emit(leaf + ".weight_packed", DType::kU8, {out, in / 2}, group, -1, params);
        return Emit(leaf + ".weight_scale", DType::kU8, {out, in / kMxfp4BlockSize}, group, -1, 0);
    }
  }
  // The first dense matrix whose width its format cannot pack, or empty.
  const std::string& shape_error() const { return shape_error_; }

  void Norm(const std::string& leaf, int64_t dim, TensorGroup group, DType dtype = DType::kBF16) {
    Emit(leaf + ".weight", dtype, {dim}, group);
  }

 private:
  const std::function<void(const TensorSpec&)>& fn_;
  std::unique_ptr<QuantizationMatcher> matcher_;
  std::string prefix_;
  int64_t layer_ = -1;
  TensorSpec spec_;
  std::string shape_error_;
};

void EmitKda(const K3Config& c, Emitter& e) {
  const auto& la = c.linear_attn;
  const int64_t h = c.hidden_size, p = c.KdaProjectionDim(), dk = la.head_dim;
  constexpr auto g = TensorGroup::kKdaAttention;
  for (const char* x : {"q", "k", "v"}) e.Dense(std::string("self_attn.") + x + "_proj", p, h, g);
  for (const char* x : {"q", "k", "v"}) {
    e.Emit(std::string("self_attn.") + x + "_conv1d.weight", DType::kF32, {p, 1, la.short_conv_kernel_size}, g);
  }
  // Only the first num_heads entries of A_log are live; the rest is zero padding.
  e.Emit("self_attn.A_log", DType::kF32, {c.ALogStoredLength()}, g, -1, static_cast<uint64_t>(la.num_heads));
  e.Emit("self_attn.dt_bias", DType::kF32, {p}, g);
  e.Dense("self_attn.f_a_proj", dk, h, g);
  e.Dense("self_attn.f_b_proj", p, dk, g);
  e.Dense("self_attn.b_proj", la.num_heads, h, g);
  if (la.use_full_rank_gate) {
    e.Dense("self_attn.g_proj", p, h, g);
  } else {
    e.Dense("self_attn.g_a_proj", dk, h, g);
    e.Dense("self_attn.g_b_proj", p, dk, g);
  }
  e.Norm("self_attn.o_norm", dk, g, DType::kF32);
  e.Dense("self_attn.o_proj", h, p, g);
}

void EmitMla(const K3Config& c, Emitter& e) {
  const int64_t h = c.hidden_size, nh = c.num_attention_heads;
  constexpr auto g = TensorGroup::kMlaAttention;
  if (c.q_lora_rank > 0) {
    e.Dense("self_attn.q_a_proj", c.q_lora_rank, h, g);
    e.Norm("self_attn.q_a_layernorm", c.q_lora_rank, g);
    e.Dense("self_attn.q_b_proj", nh * c.MlaQHeadDim(), c.q_lora_rank, g);
  } else {
    e.Dense("self_attn.q_proj", nh * c.MlaQHeadDim(), h, g);
  }
  e.Dense("self_attn.kv_a_proj_with_mqa", c.kv_lora_rank + c.qk_rope_head_dim, h, g);
  e.Norm("self_attn.kv_a_layernorm", c.kv_lora_rank, g);
  e.Linear("self_attn.kv_b_proj", nh * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank, g);
  if (c.mla_use_output_gate) e.Dense("self_attn.g_proj", nh * c.v_head_dim, h, g);
  e.Dense("self_attn.o_proj", h, nh * c.v_head_dim, g);
}

void EmitExpertMatrix(const K3Config& c, Emitter& e, const std::string& leaf, int64_t out, int64_t in,
                      int64_t expert) {
  constexpr auto g = TensorGroup::kRoutedExperts;
  if (c.ExpertsMxfp4()) {
    e.Emit(leaf + ".weight_packed", DType::kU8, {out, in / 2}, g, expert, static_cast<uint64_t>(out * in));
    e.Emit(leaf + ".weight_scale", DType::kU8, {out, in / kMxfp4BlockSize}, g, expert, 0);
  } else {
    e.Emit(leaf + ".weight", DType::kBF16, {out, in}, g, expert);
  }
}

void EmitMoe(const K3Config& c, Emitter& e) {
  const int64_t h = c.hidden_size, latent = c.ExpertInputDim(), f = c.moe_intermediate_size;
  e.Linear("block_sparse_moe.gate", c.num_experts, h, TensorGroup::kRouter);
  e.Emit("block_sparse_moe.gate.e_score_correction_bias", DType::kF32, {c.num_experts}, TensorGroup::kRouter);
  if (c.routed_expert_hidden_size > 0) {
    e.Dense("block_sparse_moe.routed_expert_down_proj", latent, h, TensorGroup::kLatentProjection);
    if (c.latent_moe_use_norm) e.Norm("block_sparse_moe.routed_expert_norm", latent, TensorGroup::kLatentProjection);
    e.Dense("block_sparse_moe.routed_expert_up_proj", h, latent, TensorGroup::kLatentProjection);
  }
  if (c.num_shared_experts > 0) {
    const int64_t s = c.SharedExpertWidth();
    e.Dense("block_sparse_moe.shared_experts.gate_proj", s, h, TensorGroup::kSharedExperts);
    e.Dense("block_sparse_moe.shared_experts.up_proj", s, h, TensorGroup::kSharedExperts);
    e.Dense("block_sparse_moe.shared_experts.down_proj", h, s, TensorGroup::kSharedExperts);
  }
  for (int64_t x = 0; x < c.num_experts; ++x) {
    std::string base = "block_sparse_moe.experts." + std::to_string(x);
    EmitExpertMatrix(c, e, base + ".w1", f, latent, x);  // gate
    EmitExpertMatrix(c, e, base + ".w2", latent, f, x);  // down
    EmitExpertMatrix(c, e, base + ".w3", f, latent, x);  // up
  }
}

}  // namespace

std::string_view TensorGroupName(TensorGroup group) {
  switch (group) {
    case TensorGroup::kEmbedding: return "embedding";
    case TensorGroup::kLmHead: return "lm_head";
    case TensorGroup::kNorms: return "norms";
    case TensorGroup::kAttnResidual: return "attention residuals";
    case TensorGroup::kKdaAttention: return "KDA attention";
    case TensorGroup::kMlaAttention: return "MLA attention";
    case TensorGroup::kDenseMlp: return "dense MLP";
    case TensorGroup::kRouter: return "router";
    case TensorGroup::kLatentProjection: return "latent projections";
    case TensorGroup::kSharedExperts: return "shared experts";
    case TensorGroup::kRoutedExperts: return "routed experts";
  }
  return "?";
}

uint64_t TensorSpec::bytes() const {
  uint64_t n = DTypeSize(dtype);
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

namespace {

void EmitAll(const K3Config& c, Emitter& e) {
  const int64_t h = c.hidden_size;
  const bool attn_res = c.attn_res_block_size > 0;
  e.Set("model.", -1);
  e.Linear("embed_tokens", c.vocab_size, h, TensorGroup::kEmbedding);

  for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    e.Set("model.layers." + std::to_string(layer) + ".", layer);
    e.Norm("input_layernorm", h, TensorGroup::kNorms);
    if (attn_res) {
      e.Norm("self_attention_res_norm", h, TensorGroup::kAttnResidual);
      e.Linear("self_attention_res_proj", 1, h, TensorGroup::kAttnResidual);
    }
    if (c.IsKdaLayer(layer)) {
      EmitKda(c, e);
    } else {
      EmitMla(c, e);
    }
    e.Norm("post_attention_layernorm", h, TensorGroup::kNorms);
    if (attn_res) {
      e.Norm("mlp_res_norm", h, TensorGroup::kAttnResidual);
      e.Linear("mlp_res_proj", 1, h, TensorGroup::kAttnResidual);
    }
    if (c.IsMoeLayer(layer)) {
      EmitMoe(c, e);
    } else {
      e.Dense("mlp.gate_proj", c.intermediate_size, h, TensorGroup::kDenseMlp);
      e.Dense("mlp.up_proj", c.intermediate_size, h, TensorGroup::kDenseMlp);
      e.Dense("mlp.down_proj", h, c.intermediate_size, TensorGroup::kDenseMlp);
    }
  }

  e.Set("model.", -1);
  e.Norm("norm", h, TensorGroup::kNorms);
  if (attn_res) {
    e.Norm("output_attn_res_norm", h, TensorGroup::kAttnResidual);
    e.Linear("output_attn_res_proj", 1, h, TensorGroup::kAttnResidual);
  }
  if (!c.tie_word_embeddings) {
    e.Set("", -1);
    e.Linear("lm_head", c.vocab_size, h, TensorGroup::kLmHead);
  }
}

}  // namespace

void ForEachK3Tensor(const K3Config& c, const std::function<void(const TensorSpec&)>& fn) {
  Emitter e(c, fn);
  EmitAll(c, e);
}

Status CheckQuantizedWidths(const K3Config& c) {
  const std::function<void(const TensorSpec&)> ignore = [](const TensorSpec&) {};
  Emitter e(c, ignore);
  EmitAll(c, e);
  if (e.shape_error().empty()) return Status::OK();
  return Status::InvalidArgument("quantization_config: " + e.shape_error());
}

std::vector<TensorSpec> K3TensorLayout(const K3Config& config) {
  std::vector<TensorSpec> out;
  ForEachK3Tensor(config, [&](const TensorSpec& s) { out.push_back(s); });
  return out;
}

}  // namespace kimi
