// kimi::Model: loading and binding the weights, sequence states, and the entry points
// (Prefill, DecodeBatch, ForwardBatch) that turn a request into forward passes.
#include <algorithm>
#include <string>

#include "core/numa_topology.h"
#include "kernels/cpu/kernel_table.h"
#include "kimi/log.h"
#include "model/k3_model.h"
#include "model/numa_experts.h"
#include "model/prefill_pieces.h"
#include "model/weight_binder.h"

namespace kimi {

using model::Segment;

uint64_t SequenceState::Bytes() const {
  uint64_t bytes = 0;
  for (const auto& k : kda) bytes += (k.recurrent.size() + k.conv.size()) * sizeof(float);
  for (const auto& m : mla) {
    const uint64_t page_floats = m.shared_pages != nullptr ? m.block_table.size() * m.page_tokens * m.row_width
                                                           : m.pages.size();
    bytes += page_floats * sizeof(float) + m.block_table.size() * sizeof(int32_t);
  }
  return bytes;
}

Status Model::Impl::Bind() {
  const K3Config& c = config;
  const int64_t D = c.hidden_size, V = c.vocab_size;
  if (c.mla_use_nope == false) return Status::Unimplemented(dir->path() + ": only NoPE MLA (mla_use_nope) is supported");
  if (c.hidden_act != "situ") return Status::Unimplemented(dir->path() + ": hidden_act '" + c.hidden_act + "'");
  if (c.moe_router_activation_func != "sigmoid") {
    return Status::Unimplemented(dir->path() + ": router activation '" + c.moe_router_activation_func + "'");
  }
  if (c.num_experts > 0 && c.num_expert_group > 1) {
    return Status::Unimplemented(dir->path() + ": group-limited routing (num_expert_group > 1)");
  }
  if (c.num_experts > 0 && !c.ExpertsMxfp4()) {
    return Status::Unimplemented(dir->path() + ": routed experts must be MXFP4 (quantization_config)");
  }

  model::WeightBinder b(*dir);
  const model::KdaDims kda_dims(c);
  const model::MlaDims mla_dims(c);
  model::ModelWeights& w = weights;
  w.embed = b.Matrix("model.embed_tokens.weight", V, D);
  w.layers.resize(c.num_hidden_layers);
  for (int64_t i = 0; i < c.num_hidden_layers && b.status().ok(); ++i) {
    model::LayerWeights& layer = w.layers[i];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    layer.input_norm = b.Vector(p + "input_layernorm.weight", {D});
    layer.post_norm = b.Vector(p + "post_attention_layernorm.weight", {D});
    if (c.attn_res_block_size > 0) {
      layer.attn_res.Bind(b, p + "self_attention_res", D);
      layer.mlp_res.Bind(b, p + "mlp_res", D);
    }
    layer.is_kda = c.IsKdaLayer(i);
    if (layer.is_kda) {
      layer.slot = num_kda++;
      layer.kda.Bind(b, p + "self_attn.", kda_dims, c.linear_attn.use_full_rank_gate);
    } else {
      layer.slot = num_mla++;
      layer.mla.Bind(b, p + "self_attn.", mla_dims, c);
    }
    layer.is_moe = c.IsMoeLayer(i);
    if (layer.is_moe) {
      layer.moe.Bind(b, p + "block_sparse_moe.", c);
    } else {
      layer.mlp.Bind(b, p + "mlp.", D, c.intermediate_size);
    }
  }
  w.final_norm = b.Vector("model.norm.weight", {D});
  if (c.attn_res_block_size > 0) w.output_res.Bind(b, "model.output_attn_res", D);
  w.lm_head = c.tie_word_embeddings ? w.embed : b.Matrix("lm_head.weight", V, D);
  KIMI_RETURN_IF_ERROR(b.status());
  owned = b.TakeOwned();
  return Status::OK();
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

namespace {

// Which CPU kernel path runs this model and why (docs/kernels.md, "Dispatch").
void LogKernelPath() {
  if (kernels::ActiveKernelsNamed()) {
    log::Info("CPU kernels", {{"path", kernels::ActiveIsa()}, {"chosen_by", "KIMI_KERNELS"}});
    return;
  }
  const kernels::DefaultChoice& choice = kernels::DefaultKernelChoice();
  if (choice.dot_peak == 0) {
    log::Info("CPU kernels", {{"path", kernels::ActiveIsa()}, {"chosen_by", "CPU features"}});
    return;
  }
  if (choice.amx_check.empty()) {
    log::Info("CPU kernels", {{"path", kernels::ActiveIsa()},
                              {"chosen_by", "prefill GEMM peaks"},
                              {"bf16_dot_per_product_gflops", choice.dot_peak},
                              {"fma_gflops", choice.fma_peak}});
    return;
  }
  // A CPU with AMX: whether its GEMM passed the check against the reference here, and its peak.
  log::Info("CPU kernels", {{"path", kernels::ActiveIsa()},
                            {"chosen_by", "prefill GEMM peaks"},
                            {"bf16_dot_per_product_gflops", choice.dot_peak},
                            {"amx_check", choice.amx_check},
                            {"amx_per_product_gflops", choice.amx_peak},
                            {"fma_gflops", choice.fma_peak}});
}

}  // namespace

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const ModelOptions& options) {
  auto impl = std::make_unique<Impl>();
  KIMI_ASSIGN_OR_RETURN(impl->dir, ModelDir::Open(dir));
  if (impl->dir->shape_only()) {
    return Status::FailedPrecondition(dir + ": a shape-only model directory (no tensor data) cannot be run");
  }
  impl->config = impl->dir->config();
  impl->options = options;
  if (impl->options.prefill_piece < 1 || impl->options.mla_page_tokens < 1) {
    return Status::InvalidArgument("ModelOptions: prefill_piece and mla_page_tokens must be >= 1");
  }
  // Every tensor of the K3 table with its dtype and shape, then each one we bind.
  KIMI_RETURN_IF_ERROR(impl->dir->ValidateLayout());
  KIMI_RETURN_IF_ERROR(impl->Bind());
  impl->pool = std::make_unique<ThreadPool>(
      options.threads, ThreadPool::DefaultSpin(),
      options.keep_subnormals ? Subnormals::kKeep : Subnormals::kFlushToZero);
  impl->PlaceForNuma();
  LogKernelPath();
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

void Model::Impl::PlaceForNuma() {
  auto topology = ReadNumaTopology(options.numa_root);
  if (!topology.ok()) {
    numa.decisions = {"NUMA: topology unreadable (" + topology.status().message() + "): nothing placed"};
    log::Warn(numa.decisions.back());
    return;
  }
  numa = PlanNumaPlacement(*topology, pool->num_threads(), config.num_experts);
  Status status;
  std::vector<model::MoeWeights*> moe_layers;
  for (auto& layer : weights.layers) {
    if (layer.is_moe) moe_layers.push_back(&layer.moe);
  }
  if (numa.active() && !moe_layers.empty()) {
    status = model::PlaceExperts(numa, moe_layers, *pool);
  }
  for (const std::string& line : numa.decisions) log::Info(line);
  if (!status.ok()) {
    // Placement only makes reads local; without it the results are the same.
    numa.groups.clear();
    numa.decisions.push_back("NUMA: placement failed (" + status.message() + "): threads and experts left unplaced");
    log::Warn(numa.decisions.back());
  } else if (numa.active()) {
    for (model::MoeWeights* moe : moe_layers) moe->placement = &numa;
  }
}

const K3Config& Model::config() const { return impl_->config; }
std::vector<MappedWeightFile> Model::MappedWeights() const { return impl_->dir->MappedShards(); }
int Model::threads() const { return impl_->pool->num_threads(); }
const std::vector<std::string>& Model::PlacementDecisions() const { return impl_->numa.decisions; }

std::unique_ptr<SequenceState> Model::NewSequence() const {
  auto state = std::make_unique<SequenceState>();
  const model::KdaDims kda_dims(impl_->config);
  const model::MlaDims mla_dims(impl_->config);
  for (int i = 0; i < impl_->num_kda; ++i) state->kda.push_back(model::NewKdaState(kda_dims));
  for (int i = 0; i < impl_->num_mla; ++i) {
    state->mla.push_back(model::NewMlaCache(mla_dims, impl_->options.mla_page_tokens));
  }
  return state;
}

namespace {

Status CheckTokens(std::span<const int32_t> tokens, int64_t vocab) {
  for (int32_t t : tokens) {
    if (t < 0 || t >= vocab) {
      return Status::InvalidArgument("token id " + std::to_string(t) + " outside the vocabulary [0, " +
                                     std::to_string(vocab) + ")");
    }
  }
  return Status::OK();
}

// A pooled MLA cache cannot grow itself: its owner must have given it the pages for `n` more
// tokens.
Status CheckPooledPages(const SequenceState& state, int64_t n) {
  for (const MlaLatentCache& m : state.mla) {
    if (m.shared_pages != nullptr && static_cast<int64_t>(m.block_table.size()) * m.page_tokens < state.length + n) {
      return Status::FailedPrecondition("the pooled MLA cache has no page for token " +
                                        std::to_string(state.length + n - 1));
    }
  }
  return Status::OK();
}

}  // namespace

Status Model::Prefill(SequenceState& state, std::span<const int32_t> tokens, LogitsRows rows,
                      std::vector<float>* logits) {
  if (tokens.empty()) return Status::InvalidArgument("Prefill: no tokens");
  KIMI_RETURN_IF_ERROR(CheckTokens(tokens, impl_->config.vocab_size));
  KIMI_RETURN_IF_ERROR(CheckPooledPages(state, static_cast<int64_t>(tokens.size())));
  const int64_t V = impl_->config.vocab_size, T = static_cast<int64_t>(tokens.size());
  logits->assign((rows == LogitsRows::kAll ? T : 1) * V, 0.0f);
  std::lock_guard<std::mutex> lock(impl_->mu);
  // Pieces of at most prefill_piece tokens bound the scratch; the state carries between them.
  for (const model::PrefillPiece& p : model::PlanPrefillPieces(T, impl_->options.prefill_piece, rows)) {
    const Segment seg{&state, 0, p.count, state.length};
    impl_->Forward(tokens.subspan(p.begin, p.count), std::span<const Segment>(&seg, 1), p.logit_rows,
                   logits->data() + p.first_logits_row * V);
    state.length += p.count;
  }
  return Status::OK();
}

Status Model::DecodeBatch(std::span<SequenceState* const> states, std::span<const int32_t> tokens,
                          std::vector<float>* logits) {
  if (states.empty() || states.size() != tokens.size()) {
    return Status::InvalidArgument("DecodeBatch: need one token per sequence (and at least one)");
  }
  std::vector<BatchInput> inputs;
  inputs.reserve(states.size());
  for (size_t i = 0; i < states.size(); ++i) inputs.push_back({states[i], tokens.subspan(i, 1), true});
  return ForwardBatch(inputs, logits);
}

Status Model::ForwardBatch(std::span<const BatchInput> inputs, std::vector<float>* logits) {
  if (inputs.empty()) return Status::InvalidArgument("ForwardBatch: no inputs");
  std::vector<int32_t> tokens;
  std::vector<Segment> segments;
  std::vector<int64_t> logit_rows;
  segments.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BatchInput& in = inputs[i];
    if (in.state == nullptr || in.tokens.empty()) {
      return Status::InvalidArgument("ForwardBatch: input " + std::to_string(i) + " has no state or no tokens");
    }
    for (size_t j = 0; j < i; ++j) {
      if (inputs[j].state == in.state) return Status::InvalidArgument("ForwardBatch: a sequence appears twice");
    }
    KIMI_RETURN_IF_ERROR(CheckTokens(in.tokens, impl_->config.vocab_size));
    KIMI_RETURN_IF_ERROR(CheckPooledPages(*in.state, static_cast<int64_t>(in.tokens.size()))
                             .WithContext("ForwardBatch input " + std::to_string(i)));
    const int64_t begin = static_cast<int64_t>(tokens.size()), n = static_cast<int64_t>(in.tokens.size());
    segments.push_back({in.state, begin, n, in.state->length});
    tokens.insert(tokens.end(), in.tokens.begin(), in.tokens.end());
    if (in.want_logits) logit_rows.push_back(begin + n - 1);
  }
  logits->assign(logit_rows.size() * size_t(impl_->config.vocab_size), 0.0f);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->Forward(tokens, segments, logit_rows, logits->data());
  for (const Segment& seg : segments) seg.state->length += seg.count;
  return Status::OK();
}

uint64_t Model::DecodeWeightBytesPerToken() const {
  const K3Config& c = impl_->config;
  const model::ModelWeights& w = impl_->weights;
  uint64_t bytes = uint64_t(c.hidden_size) * 2 + w.lm_head.bytes();  // one embedding row, lm_head
  for (const model::LayerWeights& layer : w.layers) {
    bytes += layer.is_kda ? layer.kda.MatrixBytes() : layer.mla.MatrixBytes();
    bytes += layer.is_moe ? layer.moe.BytesPerToken(c.num_experts_per_token) : layer.mlp.MatrixBytes();
  }
  return bytes;
}

uint64_t Model::MatmulFlopsPerToken() const {
  // Every matrix element read is one multiply-add (two flops); MXFP4 experts by their logical size.
  const K3Config& c = impl_->config;
  const model::ModelWeights& w = impl_->weights;
  uint64_t elements = w.lm_head.elements();
  for (const model::LayerWeights& layer : w.layers) {
    elements += layer.is_kda ? layer.kda.MatrixElements() : layer.mla.MatrixElements();
    if (layer.is_moe) {
      const model::MoeWeights& m = layer.moe;
      elements += m.router.elements() + m.latent_down.elements() + m.latent_up.elements() + m.shared.MatrixElements();
      if (!m.experts.empty()) elements += uint64_t(c.num_experts_per_token) * m.experts[0].Bytes() * 32 / 17;
    } else {
      elements += layer.mlp.MatrixElements();
    }
  }
  return 2 * elements;
}

}  // namespace kimi
