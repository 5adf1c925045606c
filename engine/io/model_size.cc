#include "kimi/model_size.h"

#include <cstdio>
#include <memory>
#include <string>

namespace kimi {
namespace {

void Add(K3SizeReport& r, TensorGroup g, uint64_t params, uint64_t bytes) {
  auto& c = r.groups[static_cast<int>(g)];
  c.params += params;
  c.bytes += bytes;
}

// Adds n BF16 parameters.
void Bf16(K3SizeReport& r, TensorGroup g, uint64_t n) { Add(r, g, n, 2 * n); }
void F32(K3SizeReport& r, TensorGroup g, uint64_t n) { Add(r, g, n, 4 * n); }

// The dense projections of one kind of layer, each in the format the quantization_config gives
// the first layer of that kind (kimi/quantization.h): BF16, int8 per channel (values, an F32
// scale per row, an I32 [2] shape) or MXFP4.
class DenseSizes {
 public:
  explicit DenseSizes(const K3Config& c) {
    if (c.quantization.present) matcher_ = std::make_unique<QuantizationMatcher>(c.quantization);
  }
  // `count` matrices [out, in] named model.layers.`layer`.`leaf`, added to group g.
  void Add(K3SizeReport& r, TensorGroup g, int64_t layer, const std::string& leaf, uint64_t out, uint64_t in,
           uint64_t count) const {
    const MatrixFormat f =
        matcher_ ? matcher_->FormatOf("model.layers." + std::to_string(layer) + "." + leaf) : MatrixFormat::kBf16;
    const uint64_t shape_tensor = f == MatrixFormat::kInt8Channel ? 8 : 0;  // int8's I32 [2] weight_shape
    kimi::Add(r, g, count * out * in, count * (MatrixWeightBytes(f, out, in) + shape_tensor));
  }

 private:
  std::unique_ptr<QuantizationMatcher> matcher_;
};

// The first layer (0-based) for which `is` holds; 0 when none does (its count is then 0).
template <class Pred>
int64_t FirstLayer(const K3Config& c, Pred is) {
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (is(l)) return l;
  }
  return 0;
}

// One routed expert matrix of out×in.
ComponentSize ExpertMatrix(const K3Config& c, uint64_t out, uint64_t in) {
  return {out * in, MatrixWeightBytes(c.ExpertsMxfp4() ? MatrixFormat::kMxfp4 : MatrixFormat::kBf16, out, in)};
}

}  // namespace

K3SizeReport ComputeK3Sizes(const K3Config& c) {
  K3SizeReport r;
  const uint64_t h = c.hidden_size, v = c.vocab_size, layers = c.num_hidden_layers;
  const auto& la = c.linear_attn;

  r.kda_layers = c.NumKdaLayers();
  r.mla_layers = c.NumMlaLayers();
  r.moe_layers = c.NumMoeLayers();
  r.dense_mlp_layers = c.num_hidden_layers - r.moe_layers;

  Bf16(r, TensorGroup::kEmbedding, v * h);
  if (!c.tie_word_embeddings) Bf16(r, TensorGroup::kLmHead, v * h);
  Bf16(r, TensorGroup::kNorms, layers * 2 * h + h);
  if (c.attn_res_block_size > 0) Bf16(r, TensorGroup::kAttnResidual, layers * 4 * h + 2 * h);

  const DenseSizes dense(c);
  const int64_t kda = FirstLayer(c, [&](int64_t l) { return c.IsKdaLayer(l); });
  const int64_t mla = FirstLayer(c, [&](int64_t l) { return !c.IsKdaLayer(l); });
  const int64_t moe = FirstLayer(c, [&](int64_t l) { return c.IsMoeLayer(l); });
  const int64_t mlp = FirstLayer(c, [&](int64_t l) { return !c.IsMoeLayer(l); });

  // KDA layers.
  {
    const uint64_t p = c.KdaProjectionDim(), dk = la.head_dim, nh = la.num_heads, n = r.kda_layers;
    constexpr auto g = TensorGroup::kKdaAttention;
    for (const char* x : {"q", "k", "v"}) dense.Add(r, g, kda, std::string("self_attn.") + x + "_proj", p, h, n);
    dense.Add(r, g, kda, "self_attn.f_a_proj", dk, h, n);
    dense.Add(r, g, kda, "self_attn.f_b_proj", p, dk, n);
    dense.Add(r, g, kda, "self_attn.b_proj", nh, h, n);
    if (la.use_full_rank_gate) {
      dense.Add(r, g, kda, "self_attn.g_proj", p, h, n);
    } else {
      dense.Add(r, g, kda, "self_attn.g_a_proj", dk, h, n);
      dense.Add(r, g, kda, "self_attn.g_b_proj", p, dk, n);
    }
    dense.Add(r, g, kda, "self_attn.o_proj", h, p, n);
    uint64_t f32 = 3 * p * la.short_conv_kernel_size + p + dk;  // convs, dt_bias, o_norm
    uint64_t a_log_stored = c.ALogStoredLength();
    Add(r, g, n * (f32 + nh), n * (4 * f32 + 4 * a_log_stored));
  }
  // MLA layers.
  {
    const uint64_t nh = c.num_attention_heads, n = r.mla_layers;
    constexpr auto g = TensorGroup::kMlaAttention;
    if (c.q_lora_rank > 0) {
      dense.Add(r, g, mla, "self_attn.q_a_proj", c.q_lora_rank, h, n);
      Bf16(r, g, n * c.q_lora_rank);  // q_a_layernorm
      dense.Add(r, g, mla, "self_attn.q_b_proj", nh * c.MlaQHeadDim(), c.q_lora_rank, n);
    } else {
      dense.Add(r, g, mla, "self_attn.q_proj", nh * c.MlaQHeadDim(), h, n);
    }
    dense.Add(r, g, mla, "self_attn.kv_a_proj_with_mqa", c.kv_lora_rank + c.qk_rope_head_dim, h, n);
    Bf16(r, g, n * (c.kv_lora_rank + nh * (c.qk_nope_head_dim + c.v_head_dim) * c.kv_lora_rank));  // norm, kv_b_proj
    if (c.mla_use_output_gate) dense.Add(r, g, mla, "self_attn.g_proj", nh * c.v_head_dim, h, n);
    dense.Add(r, g, mla, "self_attn.o_proj", h, nh * c.v_head_dim, n);
  }
  for (const char* x : {"gate", "up"}) {
    dense.Add(r, TensorGroup::kDenseMlp, mlp, std::string("mlp.") + x + "_proj", c.intermediate_size, h, r.dense_mlp_layers);
  }
  dense.Add(r, TensorGroup::kDenseMlp, mlp, "mlp.down_proj", h, c.intermediate_size, r.dense_mlp_layers);

  // MoE layers.
  ComponentSize one_expert;
  if (r.moe_layers > 0) {
    const uint64_t n = r.moe_layers, e = c.num_experts, latent = c.ExpertInputDim(), f = c.moe_intermediate_size;
    Bf16(r, TensorGroup::kRouter, n * e * h);
    F32(r, TensorGroup::kRouter, n * e);
    if (c.routed_expert_hidden_size > 0) {
      dense.Add(r, TensorGroup::kLatentProjection, moe, "block_sparse_moe.routed_expert_down_proj", latent, h, n);
      dense.Add(r, TensorGroup::kLatentProjection, moe, "block_sparse_moe.routed_expert_up_proj", h, latent, n);
      Bf16(r, TensorGroup::kLatentProjection, n * (c.latent_moe_use_norm ? latent : 0));
    }
    if (c.num_shared_experts > 0) {
      const uint64_t s = c.SharedExpertWidth();
      constexpr auto g = TensorGroup::kSharedExperts;
      dense.Add(r, g, moe, "block_sparse_moe.shared_experts.gate_proj", s, h, n);
      dense.Add(r, g, moe, "block_sparse_moe.shared_experts.up_proj", s, h, n);
      dense.Add(r, g, moe, "block_sparse_moe.shared_experts.down_proj", h, s, n);
    }
    ComponentSize up = ExpertMatrix(c, f, latent), down = ExpertMatrix(c, latent, f);
    one_expert = {2 * up.params + down.params, 2 * up.bytes + down.bytes};
    Add(r, TensorGroup::kRoutedExperts, n * e * one_expert.params, n * e * one_expert.bytes);
  }

  for (const auto& g : r.groups) {
    r.total.params += g.params;
    r.total.bytes += g.bytes;
  }

  // Per decoded token: every group whole, but one embedding row instead of the table (unless
  // the table is tied to the output projection, which reads it whole) and top-k experts
  // instead of all.
  const uint64_t active_experts = static_cast<uint64_t>(r.moe_layers) * c.num_experts_per_token;
  for (int g = 0; g < kNumTensorGroups; ++g) {
    const ComponentSize& whole = r.groups[g];
    ComponentSize read = whole;
    if (g == static_cast<int>(TensorGroup::kEmbedding)) {
      read = c.tie_word_embeddings ? ComponentSize{whole.params + h, whole.bytes + 2 * h} : ComponentSize{h, 2 * h};
    }
    if (g == static_cast<int>(TensorGroup::kRoutedExperts)) {
      read = {active_experts * one_expert.params, active_experts * one_expert.bytes};
    }
    r.active_params_per_token += read.params;
    r.bytes_per_token_by_group[g] = read.bytes;
    r.weight_bytes_per_token += read.bytes;
  }

  r.mla_cache_values_per_token = static_cast<uint64_t>(c.MlaCacheValuesPerToken()) * r.mla_layers;
  r.kda_recurrent_state_bytes = static_cast<uint64_t>(r.kda_layers) * la.num_heads * la.head_dim * la.head_dim * 4;
  r.kda_conv_state_bytes = la.short_conv_kernel_size > 0
                               ? static_cast<uint64_t>(r.kda_layers) * 3 * c.KdaProjectionDim() *
                                     (la.short_conv_kernel_size - 1) * 4
                               : 0;
  return r;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, kUnits[u]);
  return buf;
}

std::string FormatCount(uint64_t count) {
  static const char* kUnits[] = {"", "K", "M", "B", "T"};
  double v = static_cast<double>(count);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.3f %s", v, kUnits[u]);
  return buf;
}

std::string FormatSizeReport(const K3Config& c, const K3SizeReport& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "layers %lld (KDA %lld, MLA %lld; dense MLP %lld, MoE %lld)  hidden %lld  vocab %lld\n",
                (long long)c.num_hidden_layers, (long long)r.kda_layers, (long long)r.mla_layers,
                (long long)r.dense_mlp_layers, (long long)r.moe_layers, (long long)c.hidden_size,
                (long long)c.vocab_size);
  out += line;
  std::snprintf(line, sizeof line, "experts %lld (top %lld, %lld shared), expert width %lld -> %lld, %s\n",
                (long long)c.num_experts, (long long)c.num_experts_per_token, (long long)c.num_shared_experts,
                (long long)c.ExpertInputDim(), (long long)c.moe_intermediate_size,
                c.ExpertsMxfp4() ? "MXFP4" : "BF16");
  out += line;
  std::snprintf(line, sizeof line, "%-22s %18s %12s %16s\n", "component", "parameters", "", "bytes");
  out += line;
  for (int g = 0; g < kNumTensorGroups; ++g) {
    const auto& s = r.groups[g];
    if (s.params == 0 && s.bytes == 0) continue;
    std::snprintf(line, sizeof line, "%-22s %18llu %12s %16llu (%s)\n",
                  std::string(TensorGroupName(static_cast<TensorGroup>(g))).c_str(),
                  (unsigned long long)s.params, FormatCount(s.params).c_str(), (unsigned long long)s.bytes,
                  FormatBytes(s.bytes).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-22s %18llu %12s %16llu (%s)\n", "total",
                (unsigned long long)r.total.params, FormatCount(r.total.params).c_str(),
                (unsigned long long)r.total.bytes, FormatBytes(r.total.bytes).c_str());
  out += line;
  std::snprintf(line, sizeof line, "active parameters per token   %llu (%s)\n",
                (unsigned long long)r.active_params_per_token, FormatCount(r.active_params_per_token).c_str());
  out += line;
  std::snprintf(line, sizeof line, "weight bytes read per token   %llu (%s)\n",
                (unsigned long long)r.weight_bytes_per_token, FormatBytes(r.weight_bytes_per_token).c_str());
  out += line;
  std::snprintf(line, sizeof line, "MLA cache per token           %llu values = %s BF16 (%s fp32)\n",
                (unsigned long long)r.mla_cache_values_per_token, FormatBytes(r.MlaCacheBytesPerToken(2)).c_str(),
                FormatBytes(r.MlaCacheBytesPerToken(4)).c_str());
  out += line;
  std::snprintf(line, sizeof line, "KDA state per sequence        %s (recurrent %s + conv %s, fp32)\n",
                FormatBytes(r.KdaStateBytesPerSequence()).c_str(), FormatBytes(r.kda_recurrent_state_bytes).c_str(),
                FormatBytes(r.kda_conv_state_bytes).c_str());
  out += line;
  return out;
}

std::string FormatDecodeBytes(const K3SizeReport& r, double bandwidth_gb_per_s) {
  std::string out = "weight bytes read per decoded token, by part:\n";
  char line[256];
  for (int g = 0; g < kNumTensorGroups; ++g) {
    const uint64_t bytes = r.bytes_per_token_by_group[g];
    if (bytes == 0) continue;
    std::snprintf(line, sizeof line, "  %-22s %16llu (%s, %5.1f%%)\n",
                  std::string(TensorGroupName(static_cast<TensorGroup>(g))).c_str(), (unsigned long long)bytes,
                  FormatBytes(bytes).c_str(), 100.0 * double(bytes) / double(r.weight_bytes_per_token));
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-22s %16llu (%s; %.1f GB)\n", "total", (unsigned long long)r.weight_bytes_per_token,
                FormatBytes(r.weight_bytes_per_token).c_str(), double(r.weight_bytes_per_token) / 1e9);
  out += line;
  if (bandwidth_gb_per_s > 0) {
    std::snprintf(line, sizeof line, "decode at %.1f GB/s: at most %.2f tokens/s at batch 1 (bandwidth / bytes per token)\n",
                  bandwidth_gb_per_s, bandwidth_gb_per_s * 1e9 / double(r.weight_bytes_per_token));
    out += line;
  }
  return out;
}

}  // namespace kimi
