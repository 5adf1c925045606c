// The K3 forward pass on the device (gpu_model.h), step for step the pass of model/k3_model.cc,
// model/kda.cc, model/mla.cc and model/moe.cc: the comments name the CPU step each block mirrors.
#include "gpu/gpu_model.h"

#include <cmath>
#include <numeric>
#include <unordered_map>

#include "gpu/gpu_ops.h"
#include "gpu/model_ops.h"
#include "gpu/synth_fill.h"
#include "gpu/synth_weights.h"
#include "model/k3_model.h"
#include "model/prefill_pieces.h"

namespace kimi::gpu {

namespace {

constexpr float kMlaNormEps = 1e-6f;  // q_a_layernorm and kv_a_layernorm, as in model/mla.cc
// A segment this long runs the prefill kernels (chunked KDA, tiled MLA); shorter ones and
// decodes the per-token ones.
constexpr int64_t kPrefillKernelMinTokens = 16;

uint64_t AlignUp(uint64_t bytes) {
  return (bytes + DeviceArena::kAlignment - 1) / DeviceArena::kAlignment * DeviceArena::kAlignment;
}

// What a matrix pointer of the bound weights holds: enough to generate it on the device.
struct MatrixShape {
  enum Kind { kBf16, kMxfp4Packed, kMxfp4Scale } kind;
  int64_t rows, cols;  // of the logical matrix (an MXFP4 half: of the matrix it belongs to)
};

// Calls f(m) on every dense projection of the bound weights (absent ones included).
template <class F>
void ForEachDense(model::ModelWeights& w, F&& f) {
  for (model::LayerWeights& l : w.layers) {
    for (model::DenseMatrix* m : {&l.kda.q_proj, &l.kda.k_proj, &l.kda.v_proj, &l.kda.f_a, &l.kda.f_b, &l.kda.b_proj,
                                  &l.kda.g_proj, &l.kda.g_a, &l.kda.g_b, &l.kda.o_proj, &l.mla.q_a, &l.mla.q_b,
                                  &l.mla.q_proj, &l.mla.kv_a, &l.mla.g_proj, &l.mla.o_proj, &l.moe.latent_down,
                                  &l.moe.latent_up, &l.mlp.gate, &l.mlp.up, &l.mlp.down, &l.moe.shared.gate,
                                  &l.moe.shared.up, &l.moe.shared.down}) {
      f(*m);
    }
  }
}

// Calls f(pointer, bytes, shape) on every matrix pointer of the bound weights (absent ones
// included, with a null pointer), by reference so the caller can move it to the device.
// Precondition: every dense projection is BF16 (GpuModel::Load checks).
template <class F>
void ForEachMatrix(model::ModelWeights& w, F&& f) {
  auto bf16 = [&](model::Bf16Matrix& m) { f(m.w, m.bytes(), MatrixShape{MatrixShape::kBf16, m.rows, m.cols}); };
  auto mxfp4 = [&](model::Mxfp4Matrix& m) {
    f(m.packed, uint64_t(m.rows) * uint64_t(m.cols) / 2, MatrixShape{MatrixShape::kMxfp4Packed, m.rows, m.cols});
    f(m.scale, uint64_t(m.rows) * uint64_t(m.cols) / 32, MatrixShape{MatrixShape::kMxfp4Scale, m.rows, m.cols});
  };
  auto dense = [&](model::DenseMatrix& m) { f(m.w, m.bytes(), MatrixShape{MatrixShape::kBf16, m.rows, m.cols}); };
  auto situ = [&](model::SituMlpWeights& m) {
    dense(m.gate);
    dense(m.up);
    dense(m.down);
  };
  bf16(w.embed);
  bf16(w.lm_head);
  for (model::LayerWeights& l : w.layers) {
    for (model::DenseMatrix* m : {&l.kda.q_proj, &l.kda.k_proj, &l.kda.v_proj, &l.kda.f_a, &l.kda.f_b, &l.kda.b_proj,
                                  &l.kda.g_proj, &l.kda.g_a, &l.kda.g_b, &l.kda.o_proj, &l.mla.q_a, &l.mla.q_b,
                                  &l.mla.q_proj, &l.mla.kv_a}) {
      dense(*m);
    }
    bf16(l.mla.kv_b);
    dense(l.mla.g_proj);
    dense(l.mla.o_proj);
    bf16(l.moe.router);
    dense(l.moe.latent_down);
    dense(l.moe.latent_up);
    situ(l.mlp);
    situ(l.moe.shared);
    for (model::ExpertWeights& e : l.moe.experts) {
      mxfp4(e.w1);
      mxfp4(e.w3);
      mxfp4(e.w2);
    }
  }
}

// The float vectors of one layer, on the device (nullptr where the host vector is empty).
struct LayerVectors {
  const float *input_norm, *post_norm, *attn_res, *mlp_res;
  const float *q_conv, *k_conv, *v_conv, *a_log, *dt_bias, *o_norm;  // KDA
  const float *q_a_norm, *kv_a_norm;                                  // MLA
  const float *choice_bias, *latent_norm;                             // MoE
};

// Per MoE layer: device arrays of the experts' device pointers, indexed by expert id, for the
// grouped expert products.
using PointerTable = const uint8_t* const*;
struct ExpertTables {
  PointerTable w1_packed = nullptr, w1_scale = nullptr;
  PointerTable w3_packed = nullptr, w3_scale = nullptr;
  PointerTable w2_packed = nullptr, w2_scale = nullptr;
};

Status FillSyntheticMatrix(void* dst, const MatrixShape& m, uint64_t seed, const GpuStream& s) {
  switch (m.kind) {
    case MatrixShape::kBf16:
      return FillSynthBf16(static_cast<uint16_t*>(dst), m.rows * m.cols, m.cols, seed, s);
    case MatrixShape::kMxfp4Packed:
      return FillSynthMxfp4Packed(static_cast<uint8_t*>(dst), m.rows, m.cols, seed, s);
    case MatrixShape::kMxfp4Scale:
      return FillSynthMxfp4Scales(static_cast<uint8_t*>(dst), m.rows, m.cols, s);
  }
  return Status::Internal("FillSyntheticMatrix: unknown kind");
}

struct Segment {
  GpuSequence* seq;
  int64_t begin, count, past;
};

}  // namespace

struct GpuModel::Impl {
  Model::Impl cpu;          // the CPU engine's binding: host views into the mapping
  model::ModelWeights dev;  // the same structs with every matrix pointer on the device
  std::vector<LayerVectors> vectors;
  std::vector<ExpertTables> expert_tables;  // per layer (empty for dense layers)
  std::vector<std::vector<const uint8_t*>> expert_pointers;  // host copies, alive until uploaded
  const float* final_norm = nullptr;
  const float* output_res = nullptr;
  std::unique_ptr<DeviceArena> arena;
  DeviceBuffer activations;
  DeviceBuffer kda_scratch;  // the chunked KDA prefill's (empty: every KDA run is the recurrence)
  DeviceBuffer block_table;  // identity: logical page p is physical page p of a sequence's own cache
  GpuModelOptions options;
  int64_t max_pages = 0;
  ExpertPlan expert_plan;    // kept until the stream has copied it (the next MoE layer syncs first)
  std::vector<int32_t> group_ints;  // expert | first | count of the active groups
  std::vector<int32_t> route_ids;
  std::vector<float> route_weights;

  Status Upload(const GpuStream& s, const UploadProgress& progress, uint64_t* weight_bytes);
  const float* Vector(const std::vector<float>& host, const GpuStream& s, Status* st);
};

const float* GpuModel::Impl::Vector(const std::vector<float>& host, const GpuStream& s, Status* st) {
  if (host.empty() || !st->ok()) return nullptr;
  Result<void*> dst = arena->Allocate(host.size() * sizeof(float));
  if (!dst.ok()) {
    *st = dst.status();
    return nullptr;
  }
  *st = CopyToDeviceAsync(*dst, host.data(), host.size() * sizeof(float), s);
  return static_cast<const float*>(*dst);
}

Status GpuModel::Impl::Upload(const GpuStream& s, const UploadProgress& progress, uint64_t* weight_bytes) {
  // Every distinct matrix once (a tied lm_head is the embedding).
  std::unordered_map<const void*, uint64_t> ranges;
  std::unordered_map<const void*, MatrixShape> shapes;
  std::vector<const void*> order;
  ForEachMatrix(cpu.weights, [&](auto& p, uint64_t bytes, const MatrixShape& shape) {
    if (p == nullptr) return;
    auto [it, fresh] = ranges.emplace(p, bytes);
    if (fresh) order.push_back(p), shapes.emplace(p, shape);
  });
  std::vector<TensorView> views;
  views.reserve(order.size());
  uint64_t capacity = 1u << 20;
  *weight_bytes = 0;
  for (const void* p : order) {
    TensorView v;
    v.name = "matrix " + std::to_string(views.size());
    v.data = p;
    v.bytes = ranges[p];
    v.shape = {int64_t(v.bytes)};
    views.push_back(v);
    capacity += AlignUp(v.bytes);
    *weight_bytes += v.bytes;
  }
  auto add_vector = [&](const std::vector<float>& v) { capacity += AlignUp(v.size() * sizeof(float)); };
  for (const model::LayerWeights& l : cpu.weights.layers) {
    for (const auto* v : {&l.input_norm, &l.post_norm, &l.attn_res.norm_times_proj, &l.mlp_res.norm_times_proj,
                          &l.kda.q_conv, &l.kda.k_conv, &l.kda.v_conv, &l.kda.a_log, &l.kda.dt_bias, &l.kda.o_norm,
                          &l.mla.q_a_norm, &l.mla.kv_a_norm, &l.moe.choice_bias, &l.moe.latent_norm}) {
      add_vector(*v);
    }
  }
  for (const model::LayerWeights& l : cpu.weights.layers) capacity += 6 * AlignUp(l.moe.experts.size() * sizeof(void*));
  add_vector(cpu.weights.final_norm);
  add_vector(cpu.weights.output_res.norm_times_proj);
  KIMI_ASSIGN_OR_RETURN(arena, DeviceArena::Create(capacity));

  std::unordered_map<const void*, void*> device_of;
  if (options.synthetic_fill_seed != 0) {
    // Generated in place (synth_weights.h); the directory's matrix bytes are never read.
    for (size_t i = 0; i < order.size(); ++i) {
      KIMI_ASSIGN_OR_RETURN(void* dst, arena->Allocate(views[i].bytes));
      KIMI_RETURN_IF_ERROR(FillSyntheticMatrix(dst, shapes.at(order[i]), SynthHash(options.synthetic_fill_seed, i), s));
      device_of[order[i]] = dst;
    }
  } else {
    std::vector<const TensorView*> view_ptrs;
    for (const TensorView& v : views) view_ptrs.push_back(&v);
    KIMI_ASSIGN_OR_RETURN(std::vector<DeviceTensor> uploaded, UploadTensors(view_ptrs, *arena, s, progress));
    for (size_t i = 0; i < order.size(); ++i) device_of[order[i]] = uploaded[i].data;
  }
  dev = cpu.weights;
  ForEachMatrix(dev, [&](auto& p, uint64_t, const MatrixShape&) {
    if (p != nullptr) p = static_cast<std::remove_reference_t<decltype(p)>>(device_of.at(p));
  });

  Status st;
  vectors.resize(cpu.weights.layers.size());
  for (size_t i = 0; i < vectors.size(); ++i) {
    const model::LayerWeights& l = cpu.weights.layers[i];
    vectors[i] = LayerVectors{Vector(l.input_norm, s, &st),
                              Vector(l.post_norm, s, &st),
                              Vector(l.attn_res.norm_times_proj, s, &st),
                              Vector(l.mlp_res.norm_times_proj, s, &st),
                              Vector(l.kda.q_conv, s, &st),
                              Vector(l.kda.k_conv, s, &st),
                              Vector(l.kda.v_conv, s, &st),
                              Vector(l.kda.a_log, s, &st),
                              Vector(l.kda.dt_bias, s, &st),
                              Vector(l.kda.o_norm, s, &st),
                              Vector(l.mla.q_a_norm, s, &st),
                              Vector(l.mla.kv_a_norm, s, &st),
                              Vector(l.moe.choice_bias, s, &st),
                              Vector(l.moe.latent_norm, s, &st)};
  }
  // The experts' pointer tables.
  expert_tables.resize(dev.layers.size());
  auto table = [&](std::vector<const uint8_t*> host) -> PointerTable {
    if (!st.ok()) return nullptr;
    expert_pointers.push_back(std::move(host));
    const auto& h = expert_pointers.back();
    Result<void*> dst = arena->Allocate(h.size() * sizeof(void*));
    if (!dst.ok()) {
      st = dst.status();
      return nullptr;
    }
    st = CopyToDeviceAsync(*dst, h.data(), h.size() * sizeof(void*), s);
    return static_cast<PointerTable>(*dst);
  };
  for (size_t i = 0; i < dev.layers.size(); ++i) {
    const std::vector<model::ExpertWeights>& experts = dev.layers[i].moe.experts;
    if (experts.empty()) continue;
    std::vector<const uint8_t*> p1, s1, p3, s3, p2, s2;
    for (const model::ExpertWeights& e : experts) {
      p1.push_back(e.w1.packed), s1.push_back(e.w1.scale);
      p3.push_back(e.w3.packed), s3.push_back(e.w3.scale);
      p2.push_back(e.w2.packed), s2.push_back(e.w2.scale);
    }
    ExpertTables& t = expert_tables[i];
    t.w1_packed = table(std::move(p1)), t.w1_scale = table(std::move(s1));
    t.w3_packed = table(std::move(p3)), t.w3_scale = table(std::move(s3));
    t.w2_packed = table(std::move(p2)), t.w2_scale = table(std::move(s2));
  }
  final_norm = Vector(cpu.weights.final_norm, s, &st);
  output_res = Vector(cpu.weights.output_res.norm_times_proj, s, &st);
  KIMI_RETURN_IF_ERROR(st);
  KIMI_RETURN_IF_ERROR(s.Synchronize());
  expert_pointers.clear();
  return Status::OK();
}

namespace {

// One forward pass over R rows, the device twin of Model::Impl::Forward.
class Pass {
 public:
  Pass(GpuModel::Impl& m, const ActivationPlan& plan, const GpuStream& s)
      : m_(m), c_(m.cpu.config), plan_(plan), s_(s), base_(static_cast<char*>(m.activations.data())) {}

  Status Run(std::span<const int32_t> tokens, std::span<const Segment> segs, std::span<const int32_t> logit_rows,
             float* logits, int32_t* greedy);

 private:
  template <typename T = float>
  T* At(const ActivationPlan::Slice& slice) const {
    return reinterpret_cast<T*>(base_ + slice.offset);
  }
  // y[M, W.rows] = x[M, W.cols]·Wᵀ, contiguous rows (model::Apply).
  Status Apply(const model::Bf16Matrix& W, const float* x, int64_t M, float* y) const {
    return MatmulBf16(x, W.cols, W.w, M, W.rows, W.cols, y, W.rows, s_);
  }
  // Load refuses quantised dense projections, so W.w is their BF16 data.
  Status Apply(const model::DenseMatrix& W, const float* x, int64_t M, float* y) const {
    return MatmulBf16(x, W.cols, W.w, M, W.rows, W.cols, y, W.rows, s_);
  }
  Status Kda(const model::LayerWeights& l, const LayerVectors& v, const float* u, int64_t R,
             std::span<const Segment> segs, float* y);
  Status Mla(const model::LayerWeights& l, const LayerVectors& v, const float* u, int64_t R,
             std::span<const Segment> segs, float* y);
  Status DenseMlp(const model::SituMlpWeights& w, const float* x, int64_t R, float* y);
  Status Moe(const model::MoeWeights& w, const LayerVectors& v, const ExpertTables& t, const float* x, int64_t R,
             float* y);

  GpuModel::Impl& m_;
  const K3Config& c_;
  const ActivationPlan& plan_;
  const GpuStream& s_;
  char* base_;
};

Status Pass::Run(std::span<const int32_t> tokens, std::span<const Segment> segs,
                 std::span<const int32_t> logit_rows, float* logits, int32_t* greedy) {
  const model::ModelWeights& w = m_.dev;
  const int64_t R = static_cast<int64_t>(tokens.size()), D = c_.hidden_size, V = c_.vocab_size;
  const float eps = float(c_.rms_norm_eps);
  const int64_t block = c_.attn_res_block_size;
  float* partial = At(plan_.partial);
  float* mixed = At(plan_.mixed);
  float* normed = At(plan_.normed);
  float* out = At(plan_.out);
  const uint64_t row_bytes = sizeof(float) * R * D;
  std::vector<const float*> blocks;

  // x = embed_tokens[id].
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(At<int32_t>(plan_.tokens), tokens.data(), sizeof(int32_t) * R, s_));
  KIMI_RETURN_IF_ERROR(EmbedRows(w.embed.w, At<int32_t>(plan_.tokens), R, D, partial, s_));

  for (int64_t i = 0; i < c_.num_hidden_layers; ++i) {
    const model::LayerWeights& layer = w.layers[i];
    const LayerVectors& v = m_.vectors[i];
    bool block_start = false;
    // Attention input: depth mixture; a block start turns the partial sum into a snapshot.
    if (block > 0) {
      KIMI_RETURN_IF_ERROR(MixDepth(blocks, partial, v.attn_res, R, D, eps, mixed, s_));
      if (i % block == 0) {
        float* snapshot = At(plan_.blocks) + int64_t(blocks.size()) * plan_.rows * D;
        KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(snapshot, partial, row_bytes, s_));
        blocks.push_back(snapshot);
        block_start = true;
      }
    } else {
      KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(mixed, partial, row_bytes, s_));
    }
    KIMI_RETURN_IF_ERROR(RmsNorm(mixed, v.input_norm, R, D, eps, normed, s_));
    if (layer.is_kda) {
      KIMI_RETURN_IF_ERROR(Kda(layer, v, normed, R, segs, out));
    } else {
      KIMI_RETURN_IF_ERROR(Mla(layer, v, normed, R, segs, out));
    }
    if (block_start) {
      KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(partial, out, row_bytes, s_));
    } else {
      KIMI_RETURN_IF_ERROR(AddInPlace(partial, out, R * D, s_));
    }

    // FFN input: mixture with the mlp_res weights, post-attention norm, MLP or MoE; residual add.
    if (block > 0) {
      KIMI_RETURN_IF_ERROR(MixDepth(blocks, partial, v.mlp_res, R, D, eps, mixed, s_));
    } else {
      KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(mixed, partial, row_bytes, s_));
    }
    KIMI_RETURN_IF_ERROR(RmsNorm(mixed, v.post_norm, R, D, eps, normed, s_));
    if (layer.is_moe) {
      KIMI_RETURN_IF_ERROR(Moe(layer.moe, v, m_.expert_tables[i], normed, R, out));
    } else {
      KIMI_RETURN_IF_ERROR(DenseMlp(layer.mlp, normed, R, out));
    }
    KIMI_RETURN_IF_ERROR(AddInPlace(partial, out, R * D, s_));
  }

  // Output mixture over depth, final norm, lm_head on the rows that want logits.
  if (block > 0) {
    KIMI_RETURN_IF_ERROR(MixDepth(blocks, partial, m_.output_res, R, D, eps, mixed, s_));
  } else {
    KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(mixed, partial, row_bytes, s_));
  }
  const int64_t n = static_cast<int64_t>(logit_rows.size());
  if (n == 0) return s_.Synchronize();
  int32_t* rows_dev = At<int32_t>(plan_.logit_rows);
  float* head_in = At(plan_.head_in);
  float* logits_dev = At(plan_.logits);
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(rows_dev, logit_rows.data(), sizeof(int32_t) * n, s_));
  KIMI_RETURN_IF_ERROR(GatherRows(mixed, D, rows_dev, n, D, head_in, D, s_));
  KIMI_RETURN_IF_ERROR(RmsNorm(head_in, m_.final_norm, n, D, eps, head_in, s_));
  KIMI_RETURN_IF_ERROR(Apply(w.lm_head, head_in, n, logits_dev));
  KIMI_RETURN_IF_ERROR(CopyToHostAsync(logits, logits_dev, sizeof(float) * n * V, s_));
  if (greedy != nullptr) {
    // The row indices are consumed (stream order): their slice takes the argmax ids.
    KIMI_RETURN_IF_ERROR(ArgmaxRows(logits_dev, n, V, V, rows_dev, s_));
    KIMI_RETURN_IF_ERROR(CopyToHostAsync(greedy, rows_dev, sizeof(int32_t) * n, s_));
  }
  return s_.Synchronize();
}

// model::KdaForward.
Status Pass::Kda(const model::LayerWeights& layer, const LayerVectors& v, const float* u, int64_t R,
                 std::span<const Segment> segs, float* y) {
  const model::KdaWeights& w = layer.kda;
  const model::KdaDims n(c_);
  const int64_t P = n.P, H = n.H, d = n.d;
  float *q_pre = At(plan_.kda_q_pre), *k_pre = At(plan_.kda_k_pre), *v_pre = At(plan_.kda_v_pre);
  float *q = At(plan_.kda_q), *k = At(plan_.kda_k), *val = At(plan_.kda_v);
  float *f_low = At(plan_.kda_f_low), *g_low = At(plan_.kda_g_low), *f = At(plan_.kda_f), *g = At(plan_.kda_g);
  float *beta = At(plan_.kda_beta), *gate = At(plan_.kda_gate), *o = At(plan_.kda_o);

  // Projections of u: q̃, k̃, ṽ, f_a u, the β logits, the output gate's logits (or g_a u).
  KIMI_RETURN_IF_ERROR(Apply(w.q_proj, u, R, q_pre));
  KIMI_RETURN_IF_ERROR(Apply(w.k_proj, u, R, k_pre));
  KIMI_RETURN_IF_ERROR(Apply(w.v_proj, u, R, v_pre));
  KIMI_RETURN_IF_ERROR(Apply(w.f_a, u, R, f_low));
  KIMI_RETURN_IF_ERROR(Apply(w.b_proj, u, R, beta));
  if (w.g_proj.present()) {
    KIMI_RETURN_IF_ERROR(Apply(w.g_proj, u, R, gate));
  } else {
    KIMI_RETURN_IF_ERROR(Apply(w.g_a, u, R, g_low));
  }

  // Causal conv + SiLU per sequence, continuing each one's pre-conv history.
  const int width = int(n.K);
  const int64_t history = (n.K - 1) * P;
  for (const Segment& seg : segs) {
    float* conv_state = seg.seq->kda_conv(layer.slot);
    const int64_t off = seg.begin * P;
    KIMI_RETURN_IF_ERROR(
        CausalConv1dSilu(q_pre + off, P, seg.count, P, v.q_conv, nullptr, width, conv_state, q + off, P, s_));
    KIMI_RETURN_IF_ERROR(CausalConv1dSilu(k_pre + off, P, seg.count, P, v.k_conv, nullptr, width,
                                          conv_state + history, k + off, P, s_));
    KIMI_RETURN_IF_ERROR(CausalConv1dSilu(v_pre + off, P, seg.count, P, v.v_conv, nullptr, width,
                                          conv_state + 2 * history, val + off, P, s_));
  }

  // q ← d^-0.5 · q/‖q‖, k ← k/‖k‖ per head; the log decay; β = σ(W_b u).
  KIMI_RETURN_IF_ERROR(L2Normalize(q, R * H, d, 1e-6f, 1.0f / std::sqrt(float(d)), q, s_));
  KIMI_RETURN_IF_ERROR(L2Normalize(k, R * H, d, 1e-6f, 1.0f, k, s_));
  KIMI_RETURN_IF_ERROR(Apply(w.f_b, f_low, R, f));
  KIMI_RETURN_IF_ERROR(KdaGate(f, v.a_log, v.dt_bias, R, H, d, *n.lower_bound, g, s_));
  KIMI_RETURN_IF_ERROR(Sigmoid(beta, R * H, beta, s_));

  // The delta-rule recurrence per sequence: the chunked form for a prompt piece, token by token
  // for decodes and short runs (the chunked form's four launches do not pay below a few tokens).
  for (const Segment& seg : segs) {
    const kernels::KdaArgs args =
        model::SegmentKdaArgs(n, q, k, val, g, beta, seg.begin, seg.count, seg.seq->kda_recurrent(layer.slot), o);
    if (seg.count >= kPrefillKernelMinTokens && m_.kda_scratch.bytes() > 0) {
      KIMI_RETURN_IF_ERROR(KdaChunked(args, static_cast<float*>(m_.kda_scratch.data()), s_));
    } else {
      KIMI_RETURN_IF_ERROR(KdaRecurrent(args, s_));
    }
  }

  // o ← RMSNorm(o; o_norm) ⊙ σ(gate) per head; y = W_o o.
  KIMI_RETURN_IF_ERROR(RmsNorm(o, v.o_norm, R * H, d, n.eps, o, s_));
  if (!w.g_proj.present()) KIMI_RETURN_IF_ERROR(Apply(w.g_b, g_low, R, gate));
  KIMI_RETURN_IF_ERROR(MulSigmoid(o, gate, R * P, o, s_));
  return Apply(w.o_proj, o, R, y);
}

// model::MlaForward.
Status Pass::Mla(const model::LayerWeights& layer, const LayerVectors& v, const float* u, int64_t R,
                 std::span<const Segment> segs, float* y) {
  const model::MlaWeights& w = layer.mla;
  const model::MlaDims n(c_);
  const int64_t H = n.H, qw = n.dn + n.dr, rc = n.rc, dr = n.dr, dv = n.dv, row = n.row_width();
  float *c_q = At(plan_.mla_c_q), *q = At(plan_.mla_q), *kv = At(plan_.mla_kv);
  float *q_latent = At(plan_.mla_q_latent), *q_pe = At(plan_.mla_q_pe), *o_latent = At(plan_.mla_o_latent);
  float *o = At(plan_.mla_o), *gate = At(plan_.mla_gate);

  // q = W_qb RMSNorm(W_qa u) (or the full-rank q); [c̃ | k_pe] = W_kva u; the gate's logits.
  if (w.q_a.present()) {
    KIMI_RETURN_IF_ERROR(Apply(w.q_a, u, R, c_q));
    KIMI_RETURN_IF_ERROR(RmsNorm(c_q, v.q_a_norm, R, n.rq, kMlaNormEps, c_q, s_));
    KIMI_RETURN_IF_ERROR(Apply(w.q_b, c_q, R, q));
  } else {
    KIMI_RETURN_IF_ERROR(Apply(w.q_proj, u, R, q));
  }
  KIMI_RETURN_IF_ERROR(Apply(w.kv_a, u, R, kv));
  if (w.g_proj.present()) KIMI_RETURN_IF_ERROR(Apply(w.g_proj, u, R, gate));

  // The cache keeps [RMSNorm(c̃) | k_pe] for every token.
  const int32_t* table = m_.block_table.as<int32_t>();
  const int64_t page_tokens = m_.options.mla_page_tokens;
  for (const Segment& seg : segs) {
    float* pages = seg.seq->mla_pages(layer.slot);
    KIMI_RETURN_IF_ERROR(MlaCacheAppend(kv + seg.begin * row, row, seg.count, seg.past, v.kv_a_norm, kMlaNormEps,
                                        rc, dr, pages, table, page_tokens, s_));
  }

  // Absorb W_UK into the query; gather q_pe per head.
  KIMI_RETURN_IF_ERROR(
      HeadsTransposedBf16(q, n.q_width(), qw, w.kv_b.w, (n.dn + dv) * rc, R, H, n.dn, rc, q_latent, s_));
  KIMI_RETURN_IF_ERROR(CopyRows(q + n.dn, qw, R * H, dr, q_pe, dr, s_));

  // Causal attention of each sequence's new tokens over its latent cache.
  for (const Segment& seg : segs) {
    const kernels::MlaPagedCache view{seg.seq->mla_pages(layer.slot), table, page_tokens, rc, dr};
    // A prompt piece shares each cache read among its queries; a decode row reads it alone.
    const auto attention = seg.count >= kPrefillKernelMinTokens && dr <= kMlaPrefillMaxRope ? MlaPrefillAttention
                                                                                           : MlaAbsorbedAttention;
    KIMI_RETURN_IF_ERROR(attention(q_latent + seg.begin * H * rc, q_pe + seg.begin * H * dr, seg.count, H, seg.past,
                                   view, n.scale, o_latent + seg.begin * H * rc, s_));
  }

  // o_h = W_UV,h ô_h per head; output gate σ(W_g u); y = W_o o.
  for (int64_t h = 0; h < H; ++h) {
    const uint16_t* w_uv = w.kv_b.Row(h * (n.dn + dv) + n.dn);
    KIMI_RETURN_IF_ERROR(MatmulBf16(o_latent + h * rc, H * rc, w_uv, R, dv, rc, o + h * dv, H * dv, s_));
  }
  if (w.g_proj.present()) KIMI_RETURN_IF_ERROR(MulSigmoid(o, gate, R * H * dv, o, s_));
  return Apply(w.o_proj, o, R, y);
}

// model::SituMlpForward.
Status Pass::DenseMlp(const model::SituMlpWeights& w, const float* x, int64_t R, float* y) {
  const model::SituParams act(c_);
  const int64_t width = w.gate.rows;
  float *gate = At(plan_.ffn_gate), *up = At(plan_.ffn_up);
  KIMI_RETURN_IF_ERROR(Apply(w.gate, x, R, gate));
  KIMI_RETURN_IF_ERROR(Apply(w.up, x, R, up));
  KIMI_RETURN_IF_ERROR(Situ(gate, up, R * width, act.beta, act.beta_lin, gate, s_));
  return Apply(w.down, gate, R, y);
}

// model::MoeForward.
Status Pass::Moe(const model::MoeWeights& w, const LayerVectors& v, const ExpertTables& t, const float* x, int64_t R,
                 float* y) {
  const model::SituParams act(c_);
  const int64_t D = c_.hidden_size, E = c_.num_experts, Dl = c_.ExpertInputDim(), F = c_.moe_intermediate_size;
  const int k = int(c_.num_experts_per_token);
  float* logits = At(plan_.router_logits);
  float* z = w.latent_down.present() ? At(plan_.latent) : nullptr;
  const int64_t shared_width = w.shared.gate.rows;
  float *shared_gate = At(plan_.ffn_gate), *shared_up = At(plan_.ffn_up);

  // Router logits, the latent input z = W_rdown x, the shared experts' gate and up.
  KIMI_RETURN_IF_ERROR(Apply(w.router, x, R, logits));
  if (z != nullptr) KIMI_RETURN_IF_ERROR(Apply(w.latent_down, x, R, z));
  if (w.shared.gate.present()) {
    KIMI_RETURN_IF_ERROR(Apply(w.shared.gate, x, R, shared_gate));
    KIMI_RETURN_IF_ERROR(Apply(w.shared.up, x, R, shared_up));
  }

  // Router on the device; the grouping by expert on the host (a few hundred ints).
  int32_t* ids = At<int32_t>(plan_.route_ids);
  float* weights = At(plan_.route_weights);
  KIMI_RETURN_IF_ERROR(TopKRoute(logits, v.choice_bias, R, E, k, c_.moe_renormalize && k > 1,
                                 float(c_.routed_scaling_factor), ids, weights, s_));
  m_.route_ids.resize(size_t(R) * k);
  m_.route_weights.resize(size_t(R) * k);
  KIMI_RETURN_IF_ERROR(CopyToHostAsync(m_.route_ids.data(), ids, sizeof(int32_t) * R * k, s_));
  KIMI_RETURN_IF_ERROR(CopyToHostAsync(m_.route_weights.data(), weights, sizeof(float) * R * k, s_));
  KIMI_RETURN_IF_ERROR(s_.Synchronize());
  KIMI_ASSIGN_OR_RETURN(m_.expert_plan, ExpertPlan::Build(m_.route_ids.data(), m_.route_weights.data(), R, k, E));
  const ExpertPlan& plan = m_.expert_plan;
  const int64_t total = R * k;
  int32_t* source_row = At<int32_t>(plan_.plan_ints);
  int32_t* row_begin = source_row + total;
  int32_t* packed = row_begin + R + 1;
  float* entry_weight = At(plan_.plan_weights);
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(source_row, plan.source_row.data(), sizeof(int32_t) * total, s_));
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(row_begin, plan.row_begin.data(), sizeof(int32_t) * (R + 1), s_));
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(packed, plan.packed.data(), sizeof(int32_t) * total, s_));
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(entry_weight, plan.weight.data(), sizeof(float) * total, s_));
  const int64_t groups = static_cast<int64_t>(plan.active.size());
  m_.group_ints.resize(size_t(3 * groups));
  for (int64_t g = 0; g < groups; ++g) {
    m_.group_ints[size_t(g)] = plan.active[size_t(g)].expert;
    m_.group_ints[size_t(groups + g)] = plan.active[size_t(g)].first;
    m_.group_ints[size_t(2 * groups + g)] = plan.active[size_t(g)].count;
  }
  int32_t* group_expert = packed + total;
  int32_t* group_first = group_expert + groups;
  int32_t* group_count = group_first + groups;
  KIMI_RETURN_IF_ERROR(CopyToDeviceAsync(group_expert, m_.group_ints.data(), sizeof(int32_t) * 3 * groups, s_));

  // The rows of each chosen expert, packed expert after expert; the three products of every
  // active expert run as one grouped launch each.
  const float* latent = z != nullptr ? z : x;
  float *in = At(plan_.rows_in), *out = At(plan_.rows_out);
  float *eg = At(plan_.expert_gate), *eu = At(plan_.expert_up);
  KIMI_RETURN_IF_ERROR(GatherRows(latent, Dl, source_row, total, Dl, in, Dl, s_));
  KIMI_RETURN_IF_ERROR(GroupedMatmulMxfp4(in, Dl, t.w1_packed, t.w1_scale, group_expert, group_first, group_count,
                                          groups, F, Dl, eg, F, s_));
  KIMI_RETURN_IF_ERROR(GroupedMatmulMxfp4(in, Dl, t.w3_packed, t.w3_scale, group_expert, group_first, group_count,
                                          groups, F, Dl, eu, F, s_));
  KIMI_RETURN_IF_ERROR(Situ(eg, eu, total * F, act.beta, act.beta_lin, eg, s_));
  KIMI_RETURN_IF_ERROR(GroupedMatmulMxfp4(eg, F, t.w2_packed, t.w2_scale, group_expert, group_first, group_count,
                                          groups, Dl, F, out, Dl, s_));

  // acc = Σ_e w_e · Expert_e(z); latent norm; up projection plus the shared experts.
  float* acc = At(plan_.acc);
  KIMI_RETURN_IF_ERROR(CombineExpertRows(out, row_begin, packed, entry_weight, R, Dl, acc, s_));
  if (v.latent_norm != nullptr) {
    KIMI_RETURN_IF_ERROR(RmsNorm(acc, v.latent_norm, R, Dl, float(c_.rms_norm_eps), acc, s_));
  }
  if (w.latent_up.present()) {
    KIMI_RETURN_IF_ERROR(Apply(w.latent_up, acc, R, y));
  } else {
    KIMI_RETURN_IF_ERROR(CopyDeviceToDeviceAsync(y, acc, sizeof(float) * R * D, s_));
  }
  if (w.shared.gate.present()) {
    float* shared = At(plan_.ffn_out2);
    KIMI_RETURN_IF_ERROR(Situ(shared_gate, shared_up, R * shared_width, act.beta, act.beta_lin, shared_gate, s_));
    KIMI_RETURN_IF_ERROR(Apply(w.shared.down, shared_gate, R, shared));
    KIMI_RETURN_IF_ERROR(AddInPlace(y, shared, R * D, s_));
  }
  return Status::OK();
}

}  // namespace

GpuModel::GpuModel(std::unique_ptr<Impl> impl, GpuStream stream) : impl_(std::move(impl)), stream_(std::move(stream)) {}
GpuModel::~GpuModel() = default;

const K3Config& GpuModel::config() const { return impl_->cpu.config; }

Result<std::unique_ptr<GpuModel>> GpuModel::Load(const std::string& dir, const GpuModelOptions& options,
                                                 const UploadProgress& progress) {
  if (options.max_rows < 1 || options.max_context < 1 || options.mla_page_tokens < 1) {
    return Status::InvalidArgument("GpuModelOptions: max_rows, max_context and mla_page_tokens must be >= 1");
  }
  if (DeviceCount() == 0) return Status::FailedPrecondition("GpuModel: no GPU device visible");
  KIMI_RETURN_IF_ERROR(UseDevice(options.device).status());

  // The CPU engine's binding, unchanged.
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Model::Impl& cpu = impl->cpu;
  KIMI_ASSIGN_OR_RETURN(cpu.dir, ModelDir::Open(dir));
  if (cpu.dir->shape_only()) {
    return Status::FailedPrecondition(dir + ": a shape-only model directory (no tensor data) cannot be run");
  }
  cpu.config = cpu.dir->config();
  KIMI_RETURN_IF_ERROR(cpu.dir->ValidateLayout());
  KIMI_RETURN_IF_ERROR(cpu.Bind());
  bool quantized = false;
  ForEachDense(cpu.weights, [&](const model::DenseMatrix& m) { quantized |= m.format != MatrixFormat::kBf16; });
  if (quantized) {
    return Status::Unimplemented(dir + ": the GPU pass runs BF16 dense projections only; this model's are quantised");
  }
  if (cpu.num_kda > 0 && !cpu.config.linear_attn.gate_lower_bound) {
    return Status::Unimplemented(dir + ": the GPU pass needs linear_attn.gate_lower_bound (K3's KDA gate)");
  }

  KIMI_ASSIGN_OR_RETURN(GpuStream stream, GpuStream::Create());
  KIMI_ASSIGN_OR_RETURN(ActivationPlan plan, ActivationPlan::For(cpu.config, options.max_rows));
  uint64_t weight_bytes = 0;
  KIMI_RETURN_IF_ERROR(impl->Upload(stream, progress, &weight_bytes));
  KIMI_ASSIGN_OR_RETURN(impl->activations, DeviceBuffer::Create(plan.total_bytes));
  const model::KdaDims kd(cpu.config);
  if (cpu.num_kda > 0 && kd.d <= kKdaChunkMaxKeyDim && options.max_rows >= kPrefillKernelMinTokens) {
    const int64_t floats = KdaChunkedScratchFloats(options.max_rows, kd.H, kd.d);
    KIMI_ASSIGN_OR_RETURN(impl->kda_scratch, DeviceBuffer::Create(uint64_t(floats) * sizeof(float)));
  }
  impl->max_pages = (options.max_context + options.mla_page_tokens - 1) / options.mla_page_tokens;
  std::vector<int32_t> identity(size_t(impl->max_pages));
  std::iota(identity.begin(), identity.end(), 0);
  KIMI_ASSIGN_OR_RETURN(impl->block_table, DeviceBuffer::Create(identity.size() * sizeof(int32_t)));
  KIMI_RETURN_IF_ERROR(impl->block_table.CopyFromHost(identity.data(), identity.size() * sizeof(int32_t)));

  auto model = std::unique_ptr<GpuModel>(new GpuModel(std::move(impl), std::move(stream)));
  model->plan_ = plan;
  model->weight_bytes_ = weight_bytes;
  return model;
}

uint64_t GpuModel::sequence_bytes() const {
  const model::KdaDims kd(config());
  const model::MlaDims md(config());
  const uint64_t kda = AlignUp(sizeof(float) * kd.H * kd.d * kd.d) + AlignUp(sizeof(float) * 3 * (kd.K - 1) * kd.P);
  const uint64_t mla = AlignUp(sizeof(float) * impl_->max_pages * impl_->options.mla_page_tokens * md.row_width());
  return kda * impl_->cpu.num_kda + mla * impl_->cpu.num_mla;
}

Result<std::unique_ptr<GpuSequence>> GpuModel::NewSequence() const {
  const model::KdaDims kd(config());
  const model::MlaDims md(config());
  auto seq = std::make_unique<GpuSequence>();
  const uint64_t bytes = sequence_bytes();
  KIMI_ASSIGN_OR_RETURN(seq->storage_, DeviceBuffer::Create(std::max<uint64_t>(bytes, 1)));
  KIMI_RETURN_IF_ERROR(FillBytesAsync(seq->storage_.data(), 0, bytes, stream_));
  KIMI_RETURN_IF_ERROR(stream_.Synchronize());
  char* at = static_cast<char*>(seq->storage_.data());
  auto take = [&](uint64_t b) {
    float* p = reinterpret_cast<float*>(at);
    at += AlignUp(b);
    return p;
  };
  for (int i = 0; i < impl_->cpu.num_kda; ++i) {
    seq->kda_recurrent_.push_back(take(sizeof(float) * kd.H * kd.d * kd.d));
    seq->kda_conv_.push_back(take(sizeof(float) * 3 * (kd.K - 1) * kd.P));
  }
  for (int i = 0; i < impl_->cpu.num_mla; ++i) {
    seq->mla_pages_.push_back(take(sizeof(float) * impl_->max_pages * impl_->options.mla_page_tokens * md.row_width()));
  }
  seq->owner_ = this;
  return seq;
}

Status GpuModel::CheckSequence(const GpuSequence& seq, int64_t n) const {
  if (seq.owner_ != this) return Status::InvalidArgument("GpuModel: a sequence of another model");
  if (seq.length_ + n > impl_->options.max_context) {
    return Status::ResourceExhausted("GpuModel: the sequence would pass max_context (" +
                                     std::to_string(impl_->options.max_context) + " tokens)");
  }
  return Status::OK();
}

namespace {

Status CheckTokens(std::span<const int32_t> tokens, int64_t vocab) {
  for (int32_t t : tokens) {
    if (t < 0 || t >= vocab) return Status::InvalidArgument("token id " + std::to_string(t) + " outside the vocabulary");
  }
  return Status::OK();
}

}  // namespace

Status GpuModel::Prefill(GpuSequence& seq, std::span<const int32_t> tokens, LogitsRows rows,
                         std::vector<float>* logits) {
  if (tokens.empty()) return Status::InvalidArgument("Prefill: no tokens");
  KIMI_RETURN_IF_ERROR(CheckTokens(tokens, config().vocab_size));
  KIMI_RETURN_IF_ERROR(CheckSequence(seq, static_cast<int64_t>(tokens.size())));
  const int64_t V = config().vocab_size, T = static_cast<int64_t>(tokens.size());
  logits->assign((rows == LogitsRows::kAll ? T : 1) * V, 0.0f);
  for (const model::PrefillPiece& p : model::PlanPrefillPieces(T, impl_->options.max_rows, rows)) {
    const Segment seg{&seq, 0, p.count, seq.length_};
    const std::vector<int32_t> logit_rows(p.logit_rows.begin(), p.logit_rows.end());
    Pass pass(*impl_, plan_, stream_);
    KIMI_RETURN_IF_ERROR(pass.Run(tokens.subspan(p.begin, p.count), std::span<const Segment>(&seg, 1), logit_rows,
                                  logits->data() + p.first_logits_row * V, nullptr));
    seq.length_ += p.count;
  }
  return Status::OK();
}

Status GpuModel::DecodeBatch(std::span<GpuSequence* const> seqs, std::span<const int32_t> tokens,
                             std::vector<float>* logits, std::vector<int32_t>* greedy) {
  const int64_t n = static_cast<int64_t>(seqs.size());
  if (n == 0 || seqs.size() != tokens.size()) {
    return Status::InvalidArgument("DecodeBatch: need one token per sequence (and at least one)");
  }
  if (n > impl_->options.max_rows) return Status::InvalidArgument("DecodeBatch: more sequences than max_rows");
  KIMI_RETURN_IF_ERROR(CheckTokens(tokens, config().vocab_size));
  std::vector<Segment> segs;
  std::vector<int32_t> logit_rows;
  for (int64_t i = 0; i < n; ++i) {
    if (seqs[i] == nullptr) return Status::InvalidArgument("DecodeBatch: a null sequence");
    for (int64_t j = 0; j < i; ++j) {
      if (seqs[j] == seqs[i]) return Status::InvalidArgument("DecodeBatch: a sequence appears twice");
    }
    KIMI_RETURN_IF_ERROR(CheckSequence(*seqs[i], 1));
    segs.push_back({seqs[i], i, 1, seqs[i]->length_});
    logit_rows.push_back(int32_t(i));
  }
  logits->assign(size_t(n) * config().vocab_size, 0.0f);
  if (greedy != nullptr) greedy->assign(size_t(n), -1);
  Pass pass(*impl_, plan_, stream_);
  KIMI_RETURN_IF_ERROR(pass.Run(tokens, segs, logit_rows, logits->data(), greedy ? greedy->data() : nullptr));
  for (GpuSequence* s : seqs) s->length_ += 1;
  return Status::OK();
}

}  // namespace kimi::gpu
