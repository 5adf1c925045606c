#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "kimi/untrusted_json.h"
#include "io/quantization_json.h"
#include "kimi/config.h"
#include "kimi/k3_tensors.h"
#include "kimi/regular_file.h"

namespace kimi {
namespace {

using nlohmann::json;

// Reads typed fields of one JSON object and names "label: prefix.key" in every error.
class FieldReader {
 public:
  FieldReader(const json& object, std::string label, std::string prefix)
      : object_(object), label_(std::move(label)), prefix_(std::move(prefix)) {}

  Status Error(std::string_view key, const std::string& what) const {
    return Status::InvalidArgument(label_ + ": " + prefix_ + std::string(key) + ": " + what);
  }

  const json* Find(std::string_view key) const {
    auto it = object_.find(std::string(key));
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // An integer field; `fallback` when absent, an error when absent and required.
  Status Int(std::string_view key, int64_t* out, bool required, int64_t fallback = 0) const {
    const json* v = Find(key);
    if (v == nullptr) {
      if (required) return Error(key, "missing");
      *out = fallback;
      return Status::OK();
    }
    if (v->is_number_integer()) {
      *out = v->get<int64_t>();
      if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return Error(key, "out of range");
      }
      return Status::OK();
    }
    return Error(key, "expected an integer, got " + v->dump());
  }
  Status Double(std::string_view key, double* out, bool required, double fallback = 0) const {
    const json* v = Find(key);
    if (v == nullptr) {
      if (required) return Error(key, "missing");
      *out = fallback;
      return Status::OK();
    }
    if (!v->is_number()) return Error(key, "expected a number, got " + v->dump());
    *out = v->get<double>();
    return Status::OK();
  }
  Status OptionalDouble(std::string_view key, std::optional<double>* out) const {
    const json* v = Find(key);
    if (v == nullptr) {
      out->reset();
      return Status::OK();
    }
    if (!v->is_number()) return Error(key, "expected a number or null, got " + v->dump());
    *out = v->get<double>();
    return Status::OK();
  }
  Status Bool(std::string_view key, bool* out, bool fallback) const {
    const json* v = Find(key);
    if (v == nullptr) {
      *out = fallback;
      return Status::OK();
    }
    if (!v->is_boolean()) return Error(key, "expected true or false, got " + v->dump());
    *out = v->get<bool>();
    return Status::OK();
  }
  Status String(std::string_view key, std::string* out, bool required, std::string fallback = "") const {
    const json* v = Find(key);
    if (v == nullptr) {
      if (required) return Error(key, "missing");
      *out = std::move(fallback);
      return Status::OK();
    }
    if (!v->is_string()) return Error(key, "expected a string, got " + v->dump());
    *out = v->get<std::string>();
    return Status::OK();
  }
  Status IntList(std::string_view key, std::vector<int64_t>* out, bool required) const {
    const json* v = Find(key);
    out->clear();
    if (v == nullptr) return required ? Error(key, "missing") : Status::OK();
    if (!v->is_array()) return Error(key, "expected a list of integers, got " + v->dump());
    for (const auto& e : *v) {
      if (!e.is_number_integer()) return Error(key, "expected a list of integers, found " + e.dump());
      out->push_back(e.get<int64_t>());
    }
    return Status::OK();
  }
  // First present key among `keys` (published spelling first, then aliases).
  Status IntAlias(std::initializer_list<std::string_view> keys, int64_t* out, bool required,
                  int64_t fallback = 0) const {
    for (auto key : keys) {
      if (Has(key)) return Int(key, out, true);
    }
    if (required) return Error(*keys.begin(), "missing");
    *out = fallback;
    return Status::OK();
  }

  const std::string& label() const { return label_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const json& object_;
  std::string label_;
  std::string prefix_;
};

Status ParseLinearAttn(const FieldReader& text, LinearAttnConfig* out) {
  const json* lac = text.Find("linear_attn_config");
  if (lac == nullptr) return text.Error("linear_attn_config", "missing");
  if (!lac->is_object()) return text.Error("linear_attn_config", "expected an object");
  FieldReader r(*lac, text.label(), text.prefix() + "linear_attn_config.");
  KIMI_RETURN_IF_ERROR(r.IntList("kda_layers", &out->kda_layers, true));
  KIMI_RETURN_IF_ERROR(r.IntList("full_attn_layers", &out->full_attn_layers, false));
  KIMI_RETURN_IF_ERROR(r.Int("num_heads", &out->num_heads, true));
  KIMI_RETURN_IF_ERROR(r.Int("head_dim", &out->head_dim, true));
  KIMI_RETURN_IF_ERROR(r.Int("short_conv_kernel_size", &out->short_conv_kernel_size, true));
  KIMI_RETURN_IF_ERROR(r.OptionalDouble("gate_lower_bound", &out->gate_lower_bound));
  KIMI_RETURN_IF_ERROR(r.Bool("use_full_rank_gate", &out->use_full_rank_gate, false));
  return Status::OK();
}

// A list of strings, or an error naming the key.
Status StringList(const FieldReader& r, std::string_view key, std::vector<std::string>* out) {
  out->clear();
  const json* v = r.Find(key);
  if (v == nullptr) return Status::OK();
  if (!v->is_array()) return r.Error(key, "expected a list of strings");
  for (const json& e : *v) {
    if (!e.is_string()) return r.Error(key, "expected a list of strings");
    out->push_back(e.get<std::string>());
  }
  return Status::OK();
}

Status ParseQuantization(const FieldReader& text, QuantizationConfig* out) {
  const json* q = text.Find("quantization_config");
  if (q == nullptr) {
    out->present = false;
    return Status::OK();
  }
  if (!q->is_object()) return text.Error("quantization_config", "expected an object");
  FieldReader r(*q, text.label(), text.prefix() + "quantization_config.");
  out->present = true;
  KIMI_RETURN_IF_ERROR(r.String("quant_method", &out->quant_method, true));
  KIMI_RETURN_IF_ERROR(r.String("format", &out->format, false));
  KIMI_RETURN_IF_ERROR(StringList(r, "ignore", &out->ignore));
  // compressed-tensors keeps each scheme's bit width, type and group size in config_groups.*.weights.
  out->groups.clear();
  const json* groups = r.Find("config_groups");
  if (groups != nullptr) {
    if (!groups->is_object()) return r.Error("config_groups", "expected an object");
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      if (!it.value().is_object()) return r.Error("config_groups." + it.key(), "expected an object");
      FieldReader g(it.value(), text.label(), r.prefix() + "config_groups." + it.key() + ".");
      QuantizationGroup group;
      group.name = it.key();
      KIMI_RETURN_IF_ERROR(g.String("format", &group.format, false));
      KIMI_RETURN_IF_ERROR(StringList(g, "targets", &group.targets));
      const json* w = g.Find("weights");
      if (w != nullptr) {
        if (!w->is_object()) return g.Error("weights", "expected an object");
        FieldReader wr(*w, text.label(), g.prefix() + "weights.");
        KIMI_RETURN_IF_ERROR(wr.Int("num_bits", &group.num_bits, false, 4));
        KIMI_RETURN_IF_ERROR(wr.String("type", &group.type, false, "float"));
        KIMI_RETURN_IF_ERROR(wr.String("strategy", &group.strategy, false, "group"));
        KIMI_RETURN_IF_ERROR(wr.Int("group_size", &group.group_size, false, group.strategy == "group" ? 32 : 0));
        KIMI_RETURN_IF_ERROR(wr.Bool("symmetric", &group.symmetric, true));
      }
      if (group.targets.empty()) group.targets = {"Linear"};
      out->groups.push_back(std::move(group));
    }
  }
  if (out->format.empty() && !out->groups.empty()) out->format = out->groups.front().format;
  return Status::OK();
}

Status CheckLayerList(std::string_view label, std::string_view key, const std::vector<int64_t>& list,
                      int64_t layers, std::set<int64_t>* seen) {
  for (int64_t l : list) {
    if (l < 1 || l > layers) {
      return Status::InvalidArgument(std::string(label) + ": " + std::string(key) + ": layer " +
                                     std::to_string(l) + " is outside 1.." + std::to_string(layers) +
                                     " (the lists are 1-based)");
    }
    if (!seen->insert(l).second) {
      return Status::InvalidArgument(std::string(label) + ": " + std::string(key) + ": layer " +
                                     std::to_string(l) + " is listed twice or in both lists");
    }
  }
  return Status::OK();
}

}  // namespace

AttentionKind K3Config::LayerAttention(int64_t layer) const {
  const auto& kda = linear_attn.kda_layers;
  return std::find(kda.begin(), kda.end(), layer + 1) != kda.end() ? AttentionKind::kKda
                                                                   : AttentionKind::kMla;
}

bool K3Config::IsMoeLayer(int64_t layer) const {
  return num_experts > 0 && layer >= first_k_dense_replace && moe_layer_freq > 0 &&
         layer % moe_layer_freq == 0;
}

int64_t K3Config::NumKdaLayers() const {
  int64_t n = 0;
  for (int64_t i = 0; i < num_hidden_layers; ++i) n += IsKdaLayer(i) ? 1 : 0;
  return n;
}

int64_t K3Config::NumMoeLayers() const {
  int64_t n = 0;
  for (int64_t i = 0; i < num_hidden_layers; ++i) n += IsMoeLayer(i) ? 1 : 0;
  return n;
}

int64_t K3Config::ALogStoredLength() const {
  int64_t n = 1;
  while (n < linear_attn.num_heads) n <<= 1;
  return n;
}

Result<K3Config> ParseK3Config(std::string_view json_text, std::string_view label_view) {
  std::string label(label_view);
  KIMI_ASSIGN_OR_RETURN(json root, ParseUntrustedJson(json_text, label, kMaxFileJsonNesting));
  if (!root.is_object()) return Status::InvalidArgument(label + ": config is not a JSON object");

  K3Config c;
  FieldReader top(root, label, "");
  KIMI_RETURN_IF_ERROR(top.String("model_type", &c.model_type, false, "kimi_linear"));
  const json* nested = top.Find("text_config");
  if (nested != nullptr && !nested->is_object()) return top.Error("text_config", "expected an object");
  const json& text_json = nested != nullptr ? *nested : root;
  FieldReader t(text_json, label, nested != nullptr ? "text_config." : "");

  KIMI_RETURN_IF_ERROR(t.String("model_type", &c.text_model_type, false, c.model_type));
  KIMI_RETURN_IF_ERROR(t.Int("hidden_size", &c.hidden_size, true));
  KIMI_RETURN_IF_ERROR(t.Int("num_hidden_layers", &c.num_hidden_layers, true));
  KIMI_RETURN_IF_ERROR(t.Int("vocab_size", &c.vocab_size, true));
  KIMI_RETURN_IF_ERROR(t.Double("rms_norm_eps", &c.rms_norm_eps, true));
  KIMI_RETURN_IF_ERROR(t.Int("max_position_embeddings", &c.max_position_embeddings, false, 0));
  // tie_word_embeddings and the special ids may sit at either level; the text config wins.
  bool tie_top = false;
  KIMI_RETURN_IF_ERROR(top.Bool("tie_word_embeddings", &tie_top, false));
  KIMI_RETURN_IF_ERROR(t.Bool("tie_word_embeddings", &c.tie_word_embeddings, tie_top));
  for (auto [key, field] : {std::pair{"bos_token_id", &c.bos_token_id},
                            std::pair{"eos_token_id", &c.eos_token_id},
                            std::pair{"pad_token_id", &c.pad_token_id}}) {
    int64_t top_value = -1;
    if (top.Find(key) != nullptr && top.Find(key)->is_number_integer()) {
      KIMI_RETURN_IF_ERROR(top.Int(key, &top_value, false, -1));
    }
    if (t.Find(key) != nullptr && t.Find(key)->is_number_integer()) {
      KIMI_RETURN_IF_ERROR(t.Int(key, field, false, top_value));
    } else {
      *field = top_value;
    }
  }

  KIMI_RETURN_IF_ERROR(t.Int("num_attention_heads", &c.num_attention_heads, true));
  KIMI_RETURN_IF_ERROR(t.Int("num_key_value_heads", &c.num_key_value_heads, false, c.num_attention_heads));
  KIMI_RETURN_IF_ERROR(t.Int("q_lora_rank", &c.q_lora_rank, false, 0));
  KIMI_RETURN_IF_ERROR(t.Int("kv_lora_rank", &c.kv_lora_rank, true));
  KIMI_RETURN_IF_ERROR(t.Int("qk_nope_head_dim", &c.qk_nope_head_dim, true));
  KIMI_RETURN_IF_ERROR(t.Int("qk_rope_head_dim", &c.qk_rope_head_dim, true));
  KIMI_RETURN_IF_ERROR(t.Int("v_head_dim", &c.v_head_dim, true));
  KIMI_RETURN_IF_ERROR(t.Bool("mla_use_nope", &c.mla_use_nope, true));
  KIMI_RETURN_IF_ERROR(t.Bool("mla_use_output_gate", &c.mla_use_output_gate, false));

  KIMI_RETURN_IF_ERROR(ParseLinearAttn(t, &c.linear_attn));

  KIMI_RETURN_IF_ERROR(t.Int("intermediate_size", &c.intermediate_size, true));
  KIMI_RETURN_IF_ERROR(t.IntAlias({"num_experts", "n_routed_experts"}, &c.num_experts, false, 0));
  KIMI_RETURN_IF_ERROR(t.IntAlias({"num_experts_per_token", "num_experts_per_tok"},
                                  &c.num_experts_per_token, c.num_experts > 0, 0));
  KIMI_RETURN_IF_ERROR(t.IntAlias({"num_shared_experts", "n_shared_experts"}, &c.num_shared_experts, false, 0));
  KIMI_RETURN_IF_ERROR(t.Int("moe_intermediate_size", &c.moe_intermediate_size, c.num_experts > 0, 0));
  KIMI_RETURN_IF_ERROR(t.Int("routed_expert_hidden_size", &c.routed_expert_hidden_size, false, 0));
  KIMI_RETURN_IF_ERROR(t.Bool("latent_moe_use_norm", &c.latent_moe_use_norm, false));
  KIMI_RETURN_IF_ERROR(t.Int("first_k_dense_replace", &c.first_k_dense_replace, false, 0));
  KIMI_RETURN_IF_ERROR(t.Int("moe_layer_freq", &c.moe_layer_freq, false, 1));
  KIMI_RETURN_IF_ERROR(t.Double("routed_scaling_factor", &c.routed_scaling_factor, false, 1.0));
  KIMI_RETURN_IF_ERROR(t.Bool("moe_renormalize", &c.moe_renormalize, true));
  KIMI_RETURN_IF_ERROR(t.String("moe_router_activation_func", &c.moe_router_activation_func, false, "sigmoid"));
  KIMI_RETURN_IF_ERROR(t.Bool("use_grouped_topk", &c.use_grouped_topk, true));
  KIMI_RETURN_IF_ERROR(t.Int("num_expert_group", &c.num_expert_group, false, 1));
  KIMI_RETURN_IF_ERROR(t.Int("topk_group", &c.topk_group, false, 1));

  KIMI_RETURN_IF_ERROR(t.String("hidden_act", &c.hidden_act, true));
  KIMI_RETURN_IF_ERROR(t.Double("activation_situ_beta", &c.activation_situ_beta, false, 1.0));
  KIMI_RETURN_IF_ERROR(t.OptionalDouble("activation_situ_linear_beta", &c.activation_situ_linear_beta));
  KIMI_RETURN_IF_ERROR(t.Int("attn_res_block_size", &c.attn_res_block_size, false, 0));

  // Moonshot keeps quantization_config inside text_config; accept it at the top level too.
  KIMI_RETURN_IF_ERROR(ParseQuantization(t, &c.quantization));
  if (!c.quantization.present && nested != nullptr) KIMI_RETURN_IF_ERROR(ParseQuantization(top, &c.quantization));

  KIMI_RETURN_IF_ERROR(ValidateK3Config(c, label + ": " + t.prefix()));
  return c;
}

Status ValidateK3Config(const K3Config& c, std::string_view prefix_view) {
  // prefix_view is "path: " or "path: text_config."; keys are appended to it.
  std::string prefix(prefix_view);
  auto err = [&](std::string_view key, const std::string& what) {
    return Status::InvalidArgument(prefix + std::string(key) + ": " + what);
  };
  auto positive = [&](std::string_view key, int64_t v) -> Status {
    if (v <= 0) return err(key, "must be positive, got " + std::to_string(v));
    return Status::OK();
  };
  KIMI_RETURN_IF_ERROR(positive("hidden_size", c.hidden_size));
  KIMI_RETURN_IF_ERROR(positive("num_hidden_layers", c.num_hidden_layers));
  KIMI_RETURN_IF_ERROR(positive("vocab_size", c.vocab_size));
  if (!(c.rms_norm_eps > 0)) return err("rms_norm_eps", "must be positive");
  if (c.num_hidden_layers > 100000) return err("num_hidden_layers", "implausibly large");

  // Layer kinds: the two 1-based lists must partition 1..num_hidden_layers.
  const auto& la = c.linear_attn;
  std::set<int64_t> seen;
  KIMI_RETURN_IF_ERROR(CheckLayerList(prefix, "linear_attn_config.kda_layers", la.kda_layers, c.num_hidden_layers, &seen));
  KIMI_RETURN_IF_ERROR(CheckLayerList(prefix, "linear_attn_config.full_attn_layers", la.full_attn_layers, c.num_hidden_layers, &seen));
  if (!la.full_attn_layers.empty() && static_cast<int64_t>(seen.size()) != c.num_hidden_layers) {
    return err("linear_attn_config", "kda_layers and full_attn_layers cover " + std::to_string(seen.size()) +
                                         " of the " + std::to_string(c.num_hidden_layers) + " layers");
  }
  bool any_kda = !la.kda_layers.empty();
  bool any_mla = static_cast<int64_t>(la.kda_layers.size()) < c.num_hidden_layers;
  if (any_kda) {
    KIMI_RETURN_IF_ERROR(positive("linear_attn_config.num_heads", la.num_heads));
    KIMI_RETURN_IF_ERROR(positive("linear_attn_config.head_dim", la.head_dim));
    KIMI_RETURN_IF_ERROR(positive("linear_attn_config.short_conv_kernel_size", la.short_conv_kernel_size));
  }
  if (any_mla) {
    KIMI_RETURN_IF_ERROR(positive("num_attention_heads", c.num_attention_heads));
    KIMI_RETURN_IF_ERROR(positive("kv_lora_rank", c.kv_lora_rank));
    KIMI_RETURN_IF_ERROR(positive("qk_nope_head_dim", c.qk_nope_head_dim));
    if (c.qk_rope_head_dim < 0) return err("qk_rope_head_dim", "must not be negative");
    KIMI_RETURN_IF_ERROR(positive("v_head_dim", c.v_head_dim));
    if (c.q_lora_rank < 0) return err("q_lora_rank", "must not be negative");
    if (!c.mla_use_nope) {
      return Status::Unimplemented(prefix + "mla_use_nope: only the NoPE form of MLA (true) is supported");
    }
    if (c.num_key_value_heads != c.num_attention_heads) {
      return err("num_key_value_heads", "must equal num_attention_heads (" +
                                            std::to_string(c.num_attention_heads) + ") for MLA");
    }
  }

  // MLPs.
  if (c.first_k_dense_replace < 0 || c.first_k_dense_replace > c.num_hidden_layers) {
    return err("first_k_dense_replace", "must be in 0.." + std::to_string(c.num_hidden_layers));
  }
  KIMI_RETURN_IF_ERROR(positive("moe_layer_freq", c.moe_layer_freq));
  bool any_dense = false;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) any_dense |= !c.IsMoeLayer(i);
  if (any_dense) KIMI_RETURN_IF_ERROR(positive("intermediate_size", c.intermediate_size));
  if (c.num_experts < 0) return err("num_experts", "must not be negative");
  if (c.num_experts > 0) {
    if (c.num_experts_per_token < 1 || c.num_experts_per_token > c.num_experts) {
      return err("num_experts_per_token", "must be in 1.." + std::to_string(c.num_experts));
    }
    KIMI_RETURN_IF_ERROR(positive("moe_intermediate_size", c.moe_intermediate_size));
    if (c.num_shared_experts < 0) return err("num_shared_experts", "must not be negative");
    if (c.routed_expert_hidden_size < 0) return err("routed_expert_hidden_size", "must not be negative");
    if (c.moe_router_activation_func != "sigmoid") {
      return Status::Unimplemented(prefix + "moe_router_activation_func: only \"sigmoid\" is supported, got \"" +
                                   c.moe_router_activation_func + "\"");
    }
    KIMI_RETURN_IF_ERROR(positive("num_expert_group", c.num_expert_group));
    if (c.num_experts % c.num_expert_group != 0) return err("num_expert_group", "must divide num_experts");
    if (c.topk_group < 1 || c.topk_group > c.num_expert_group) {
      return err("topk_group", "must be in 1..num_expert_group");
    }
    if (!(c.routed_scaling_factor > 0)) return err("routed_scaling_factor", "must be positive");
  }
  if (c.hidden_act != "situ") {
    return Status::Unimplemented(prefix + "hidden_act: only \"situ\" is supported, got \"" + c.hidden_act + "\"");
  }
  if (!(c.activation_situ_beta > 0)) return err("activation_situ_beta", "must be positive");
  if (c.activation_situ_linear_beta && !(*c.activation_situ_linear_beta > 0)) {
    return err("activation_situ_linear_beta", "must be positive");
  }
  if (c.attn_res_block_size < 0) return err("attn_res_block_size", "must not be negative");

  if (c.quantization.present) {
    KIMI_RETURN_IF_ERROR(ValidateQuantization(c.quantization, prefix + "quantization_config."));
    if (c.num_experts > 0) {
      int64_t moe_layer = 0;
      while (moe_layer + 1 < c.num_hidden_layers && !c.IsMoeLayer(moe_layer)) ++moe_layer;
      const std::string expert = "model.layers." + std::to_string(moe_layer) + ".block_sparse_moe.experts.0.w1";
      if (QuantizationMatcher(c.quantization).FormatOf(expert) != MatrixFormat::kMxfp4) {
        return err("quantization_config", "the routed experts must be in an mxfp4-pack-quantized group");
      }
    }
    if (Status widths = CheckQuantizedWidths(c); !widths.ok()) return Status::InvalidArgument(prefix + widths.message());
    if (c.num_experts > 0) {
      // Every expert matrix is packed along its input: the latent (w1, w3) or the FFN width (w2).
      if (c.ExpertInputDim() % 32 != 0) {
        return err(c.routed_expert_hidden_size > 0 ? "routed_expert_hidden_size" : "hidden_size",
                   "must be a multiple of 32 for MXFP4 experts");
      }
      if (c.moe_intermediate_size % 32 != 0) return err("moe_intermediate_size", "must be a multiple of 32 for MXFP4 experts");
    }
  }
  return Status::OK();
}

Result<K3Config> LoadK3Config(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, 16 << 20, FinalLink::kFollow));
  return ParseK3Config(text, path);
}

nlohmann::ordered_json QuantizationToJson(const QuantizationConfig& q) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (const QuantizationGroup& g : q.EffectiveGroups()) {
    groups[g.name] = {{"format", g.format.empty() ? q.format : g.format},
                      {"targets", g.targets},
                      {"input_activations", nullptr},
                      {"output_activations", nullptr},
                      {"weights",
                       {{"num_bits", g.num_bits},
                        {"group_size", g.group_size > 0 ? nlohmann::ordered_json(g.group_size) : nlohmann::ordered_json(nullptr)},
                        {"type", g.type},
                        {"strategy", g.strategy},
                        {"symmetric", g.symmetric},
                        {"dynamic", false}}}};
  }
  return {
      {"quant_method", q.quant_method}, {"format", q.format}, {"ignore", q.ignore}, {"config_groups", groups}};
}

std::string K3ConfigToJson(const K3Config& c) {
  nlohmann::ordered_json lac = {
      {"kda_layers", c.linear_attn.kda_layers},
      {"full_attn_layers", c.linear_attn.full_attn_layers},
      {"num_heads", c.linear_attn.num_heads},
      {"head_dim", c.linear_attn.head_dim},
      {"short_conv_kernel_size", c.linear_attn.short_conv_kernel_size},
      {"use_full_rank_gate", c.linear_attn.use_full_rank_gate},
  };
  lac["gate_lower_bound"] = c.linear_attn.gate_lower_bound ? nlohmann::ordered_json(*c.linear_attn.gate_lower_bound)
                                                           : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json t;
  t["model_type"] = c.text_model_type;
  t["hidden_size"] = c.hidden_size;
  t["num_hidden_layers"] = c.num_hidden_layers;
  t["vocab_size"] = c.vocab_size;
  t["rms_norm_eps"] = c.rms_norm_eps;
  t["max_position_embeddings"] = c.max_position_embeddings;
  t["tie_word_embeddings"] = c.tie_word_embeddings;
  if (c.bos_token_id >= 0) t["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_id >= 0) t["eos_token_id"] = c.eos_token_id;
  if (c.pad_token_id >= 0) t["pad_token_id"] = c.pad_token_id;
  t["hidden_act"] = c.hidden_act;
  t["activation_situ_beta"] = c.activation_situ_beta;
  t["activation_situ_linear_beta"] = c.activation_situ_linear_beta ? nlohmann::ordered_json(*c.activation_situ_linear_beta)
                                                                   : nlohmann::ordered_json(nullptr);
  t["attn_res_block_size"] = c.attn_res_block_size > 0 ? nlohmann::ordered_json(c.attn_res_block_size)
                                                       : nlohmann::ordered_json(nullptr);
  t["num_attention_heads"] = c.num_attention_heads;
  t["num_key_value_heads"] = c.num_key_value_heads;
  t["q_lora_rank"] = c.q_lora_rank > 0 ? nlohmann::ordered_json(c.q_lora_rank) : nlohmann::ordered_json(nullptr);
  t["kv_lora_rank"] = c.kv_lora_rank;
  t["qk_nope_head_dim"] = c.qk_nope_head_dim;
  t["qk_rope_head_dim"] = c.qk_rope_head_dim;
  t["v_head_dim"] = c.v_head_dim;
  t["mla_use_nope"] = c.mla_use_nope;
  t["mla_use_output_gate"] = c.mla_use_output_gate;
  t["linear_attn_config"] = lac;
  t["intermediate_size"] = c.intermediate_size;
  t["first_k_dense_replace"] = c.first_k_dense_replace;
  t["moe_layer_freq"] = c.moe_layer_freq;
  t["num_experts"] = c.num_experts;
  t["num_experts_per_token"] = c.num_experts_per_token;
  t["num_shared_experts"] = c.num_shared_experts;
  t["moe_intermediate_size"] = c.moe_intermediate_size;
  t["routed_expert_hidden_size"] = c.routed_expert_hidden_size > 0 ? nlohmann::ordered_json(c.routed_expert_hidden_size)
                                                                   : nlohmann::ordered_json(nullptr);
  t["latent_moe_use_norm"] = c.latent_moe_use_norm;
  t["moe_renormalize"] = c.moe_renormalize;
  t["moe_router_activation_func"] = c.moe_router_activation_func;
  t["routed_scaling_factor"] = c.routed_scaling_factor;
  t["topk_method"] = "noaux_tc";
  t["use_grouped_topk"] = c.use_grouped_topk;
  t["num_expert_group"] = c.num_expert_group;
  t["topk_group"] = c.topk_group;
  t["num_nextn_predict_layers"] = 0;
  if (c.quantization.present) t["quantization_config"] = QuantizationToJson(c.quantization);
  nlohmann::ordered_json root;
  root["architectures"] = {"KimiK3ForConditionalGeneration"};
  root["model_type"] = c.model_type;
  if (c.bos_token_id >= 0) root["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_id >= 0) root["eos_token_id"] = c.eos_token_id;
  if (c.pad_token_id >= 0) root["pad_token_id"] = c.pad_token_id;
  root["tie_word_embeddings"] = c.tie_word_embeddings;
  root["torch_dtype"] = "bfloat16";
  root["text_config"] = t;
  return root.dump(2) + "\n";
}

}  // namespace kimi
