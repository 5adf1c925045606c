#include "model/moe.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/cpu/kernels.h"
#include "model/batch.h"

namespace kimi::model {

SituParams::SituParams(const K3Config& c)
    : beta(float(c.activation_situ_beta)),
      beta_lin(c.activation_situ_linear_beta ? float(*c.activation_situ_linear_beta)
                                             : std::numeric_limits<float>::infinity()) {}

void SituMlpWeights::Bind(WeightBinder& b, const std::string& p, int64_t D, int64_t width) {
  gate = b.Dense(p + "gate_proj", width, D);
  up = b.Dense(p + "up_proj", width, D);
  down = b.Dense(p + "down_proj", D, width);
}

void MoeWeights::Bind(WeightBinder& b, const std::string& p, const K3Config& c) {
  const int64_t D = c.hidden_size, E = c.num_experts, Dl = c.ExpertInputDim(), F = c.moe_intermediate_size;
  router = b.Matrix(p + "gate.weight", E, D);
  choice_bias = b.Vector(p + "gate.e_score_correction_bias", {E});
  if (c.routed_expert_hidden_size > 0) {
    latent_down = b.Dense(p + "routed_expert_down_proj", Dl, D);
    latent_up = b.Dense(p + "routed_expert_up_proj", D, Dl);
    if (c.latent_moe_use_norm) latent_norm = b.Vector(p + "routed_expert_norm.weight", {Dl});
  }
  experts.resize(E);
  for (int64_t e = 0; e < E && b.status().ok(); ++e) {
    const std::string ep = p + "experts." + std::to_string(e) + ".";
    experts[e].w1 = b.Mxfp4(ep + "w1", F, Dl);
    experts[e].w3 = b.Mxfp4(ep + "w3", F, Dl);
    experts[e].w2 = b.Mxfp4(ep + "w2", Dl, F);
  }
  if (c.num_shared_experts > 0) shared.Bind(b, p + "shared_experts.", D, c.SharedExpertWidth());
}

uint64_t MoeWeights::BytesPerToken(int64_t top_k) const {
  uint64_t expert = experts.empty() ? 0 : experts[0].Bytes();
  return router.bytes() + latent_down.bytes() + latent_up.bytes() + shared.MatrixBytes() + top_k * expert;
}

namespace {

// gate ← SiTU(gate, up); without a linear β the up factor passes unchanged.
void SituInPlace(float* gate, const float* up, int64_t n, const SituParams& act, ThreadPool* pool) {
  if (std::isfinite(act.beta_lin)) {
    kernels::Situ(gate, up, n, act.beta, act.beta_lin, gate, pool);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = act.beta * std::tanh(g / act.beta) / (1.0f + std::exp(-g)) * up[i];
  }
}

// out[m, Dl] = Expert(in[m, Dl]) = w2 · SiTU(w1 in, w3 in), MXFP4 weights.
void ExpertForward(const ExpertWeights& e, const SituParams& act, const float* in, int64_t m,
                   std::vector<float>& gate_buffer, std::vector<float>& up_buffer, float* out, ThreadPool* pool) {
  const int64_t F = e.w1.rows;
  float* gate = Reserve(gate_buffer, m * F);
  float* up = Reserve(up_buffer, m * F);
  Apply(e.w1, in, m, gate, pool);
  Apply(e.w3, in, m, up, pool);
  SituInPlace(gate, up, m * F, act, pool);
  Apply(e.w2, gate, m, out, pool);
}

}  // namespace

void SituMlpForward(const SituMlpWeights& w, const SituParams& act, const float* x, int64_t R, FfnScratch& s,
                    float* y, ThreadPool* pool) {
  const int64_t width = w.gate.rows;
  float* gate = Reserve(s.gate, R * width);
  float* up = Reserve(s.up, R * width);
  s.batch.Clear();
  s.batch.Add(w.gate, x, gate);
  s.batch.Add(w.up, x, up);
  s.batch.Run(R, pool);
  SituInPlace(gate, up, R * width, act, pool);
  Apply(w.down, gate, R, y, pool);
}

bool MoeSpreadsWholeExperts(int64_t rows, int64_t active, int threads) {
  constexpr int64_t kSpreadRowsPerExpert = 16, kSpreadExpertsPerThread = 8;
  return threads > 1 && (rows <= kSpreadRowsPerExpert * active || active >= kSpreadExpertsPerThread * threads);
}

void MoeForward(const MoeWeights& w, const K3Config& c, const SituParams& act, const float* x, int64_t R,
                FfnScratch& s, float* y, ThreadPool* pool) {
  const int64_t D = c.hidden_size, E = c.num_experts, Dl = c.ExpertInputDim();
  const int k = int(c.num_experts_per_token);

  // Every product of x in one parallel region: router logits, latent input z = W_rdown x, and
  // the shared experts' gate and up projections.
  float* logits = Reserve(s.logits, R * E);
  float* z = w.latent_down.present() ? Reserve(s.z, R * Dl) : nullptr;
  const int64_t shared_width = w.shared.gate.rows;
  float* shared_gate = w.shared.gate.present() ? Reserve(s.shared_gate, R * shared_width) : nullptr;
  float* shared_up = w.shared.gate.present() ? Reserve(s.shared_up, R * shared_width) : nullptr;
  s.batch.Clear();
  s.batch.Add(w.router, x, logits);
  s.batch.Add(w.latent_down, x, z);
  s.batch.Add(w.shared.gate, x, shared_gate);
  s.batch.Add(w.shared.up, x, shared_up);
  s.batch.Run(R, pool);

  // Router: s = σ(W_r x), top-k on s + bias, weights the unbiased s (renormalised, scaled).
  if (static_cast<int64_t>(s.ids.size()) < R * k) s.ids.resize(R * k);
  float* weights = Reserve(s.weights, R * k);
  kernels::TopKRoute(logits, w.choice_bias.data(), R, E, k, c.moe_renormalize && k > 1,
                     float(c.routed_scaling_factor), s.ids.data(), weights, pool);

  // The experts work in the latent space z (x itself without a latent projection).
  const float* latent = z != nullptr ? z : x;

  // Group rows by expert, so each chosen expert's weights are streamed once per pass.
  s.by_expert.resize(E);
  for (auto& list : s.by_expert) list.clear();
  for (int64_t r = 0; r < R; ++r) {
    for (int j = 0; j < k; ++j) s.by_expert[s.ids[r * k + j]].push_back({int32_t(r), weights[r * k + j]});
  }

  // The rows of each chosen expert, packed expert after expert.
  float* in = Reserve(s.rows_in, R * k * Dl);
  float* out = Reserve(s.rows_out, R * k * Dl);
  s.active.clear();
  int64_t total = 0;
  for (int64_t e = 0; e < E; ++e) {
    const auto& rows = s.by_expert[e];
    if (rows.empty()) continue;
    s.active.push_back({int32_t(e), total});
    for (const auto& [row, weight] : rows) std::memcpy(in + total++ * Dl, latent + row * Dl, sizeof(float) * Dl);
  }

  // Whole experts per thread (MoeSpreadsWholeExperts): one parallel region for all of them
  // instead of three small ones per expert. Threads take whole experts one at a time, so the
  // load balances by what each expert really costs (reading its weights dominates at a few
  // rows, which a split by rows alone ignores) and a thread that wakes late simply runs fewer
  // experts; with NUMA placement, a thread takes its own node's experts first. Otherwise (many
  // rows over few experts) one expert at a time, each product split over the threads. Either
  // way an expert's output rows are computed the same way.
  const int64_t n_active = static_cast<int64_t>(s.active.size());
  if (pool != nullptr && MoeSpreadsWholeExperts(total, n_active, pool->num_threads())) {
    s.thread_gate.resize(size_t(pool->num_threads()));
    s.thread_up.resize(size_t(pool->num_threads()));
    ParallelForByNode(
        pool, w.placement, n_active, [&](int64_t a) { return w.placement->GroupOfExpert(s.active[size_t(a)].first); },
        [&](int64_t a, int t) {
          const auto [e, first] = s.active[size_t(a)];
          const int64_t m = static_cast<int64_t>(s.by_expert[e].size());
          ExpertForward(w.experts[e], act, in + first * Dl, m, s.thread_gate[size_t(t)], s.thread_up[size_t(t)],
                        out + first * Dl, nullptr);
        });
  } else {
    for (const auto& [e, first] : s.active) {
      const int64_t m = static_cast<int64_t>(s.by_expert[e].size());
      ExpertForward(w.experts[e], act, in + first * Dl, m, s.gate, s.up, out + first * Dl, pool);
    }
  }

  // acc = Σ_e w_e · Expert_e(z), in expert order.
  float* acc = Reserve(s.acc, R * Dl);
  std::memset(acc, 0, sizeof(float) * R * Dl);
  for (const auto& [e, first] : s.active) {
    const auto& rows = s.by_expert[e];
    for (size_t i = 0; i < rows.size(); ++i) {
      float* dst = acc + rows[i].first * Dl;
      const float* src = out + (first + int64_t(i)) * Dl;
      const float wt = rows[i].second;
      for (int64_t j = 0; j < Dl; ++j) dst[j] += wt * src[j];
    }
  }

  // Latent norm, then in one parallel region the up projection back to D and the shared
  // experts' down projection of SiTU(gate, up); y is their sum.
  if (!w.latent_norm.empty()) kernels::RmsNorm(acc, w.latent_norm.data(), R, Dl, float(c.rms_norm_eps), acc, pool);
  float* shared = w.shared.gate.present() ? Reserve(s.shared_out, R * D) : nullptr;
  if (shared != nullptr) SituInPlace(shared_gate, shared_up, R * shared_width, act, pool);
  s.batch.Clear();
  s.batch.Add(w.latent_up, acc, y);
  if (shared != nullptr) s.batch.Add(w.shared.down, shared_gate, shared);
  s.batch.Run(R, pool);
  if (!w.latent_up.present()) std::memcpy(y, acc, sizeof(float) * R * D);
  if (shared != nullptr) {
    for (int64_t i = 0; i < R * D; ++i) y[i] += shared[i];
  }
}

}  // namespace kimi::model
