// The feed-forward layers, docs/engine.md "SiTU and the SiTU MLP" and "Latent MoE layer": the
// dense SiTU MLP, and the latent MoE (sigmoid router with a choice bias, top-k, the routed
// experts in the latent space with MXFP4 weights read in place, the latent norm, the up
// projection, plus the shared experts).
//
// Owns: nothing but views of its weights. Scratch comes from the caller.
// Thread safety: the forward functions write only the scratch and `y`.
#pragma once

#include <cstdint>
#include <vector>

#include "core/numa_placement.h"
#include "kimi/config.h"
#include "model/linear.h"
#include "model/weight_binder.h"

namespace kimi::model {

struct SituParams {
  float beta;      // activation_situ_beta
  float beta_lin;  // activation_situ_linear_beta; +inf when absent (u passes unchanged)
  explicit SituParams(const K3Config& c);
};

// W_down · SiTU(W_gate x, W_up x); BF16 or quantised weights.
struct SituMlpWeights {
  DenseMatrix gate, up; // [width, D]
  DenseMatrix down;     // [D, width]

  void Bind(WeightBinder& binder, const std::string& prefix, int64_t D, int64_t width);
  uint64_t MatrixBytes() const { return gate.bytes() + up.bytes() + down.bytes(); }
  uint64_t MatrixElements() const { return gate.elements() + up.elements() + down.elements(); }
};

// One routed expert: w1 (gate), w3 (up) [F, Dl]; w2 (down) [Dl, F]; MXFP4.
struct ExpertWeights {
  Mxfp4Matrix w1, w3, w2;
  uint64_t Bytes() const { return w1.bytes() + w3.bytes() + w2.bytes(); }
};

struct MoeWeights {
  Bf16Matrix router;                   // [E, D]
  std::vector<float> choice_bias;      // [E] e_score_correction_bias
  DenseMatrix latent_down;             // [Dl, D] (routed_expert_hidden_size)
  std::vector<float> latent_norm;      // [Dl] (latent_moe_use_norm)
  DenseMatrix latent_up;               // [D, Dl]
  std::vector<ExpertWeights> experts;  // [E]
  SituMlpWeights shared;               // width Ns·F (absent when Ns = 0)
  // Which NUMA node holds each expert (Model::Load sets it when it placed them): a decode
  // step's chosen experts run on their node's threads first. Null: no placement.
  const NumaPlan* placement = nullptr;

  void Bind(WeightBinder& binder, const std::string& prefix, const K3Config& c);
  // Bytes one token reads: router, latent projections, shared experts and k experts.
  uint64_t BytesPerToken(int64_t top_k) const;
};

struct FfnScratch {
  std::vector<float> gate, up;        // [R, width]
  std::vector<float> logits;          // [R, E]
  std::vector<int32_t> ids;           // [R, k]
  std::vector<float> weights;         // [R, k]
  std::vector<float> z;               // [R, Dl] latent input
  std::vector<float> acc;             // [R, Dl] weighted sum of expert outputs
  std::vector<float> rows_in;         // [R·k, Dl] the rows sent to each chosen expert, grouped by expert
  std::vector<float> rows_out;        // [R·k, Dl] their expert outputs
  std::vector<std::pair<int32_t, int64_t>> active;  // (expert, its first row in rows_in)
  std::vector<std::vector<float>> thread_gate, thread_up;  // per pool thread, when experts are spread
  std::vector<float> shared_gate, shared_up;  // [R, shared width] the shared experts' projections
  std::vector<float> shared_out;      // [R, D]
  std::vector<std::vector<std::pair<int32_t, float>>> by_expert;  // per expert: (row, weight)
  ProductBatch batch;                  // products sharing one parallel region
};

// y[R, D] = W_down SiTU(W_gate x, W_up x).
void SituMlpForward(const SituMlpWeights& w, const SituParams& act, const float* x, int64_t R, FfnScratch& s,
                    float* y, ThreadPool* pool);

// y[R, D] = LatentMoE(x[R, D]). Each expert's weights are read once for all rows routed to it.
void MoeForward(const MoeWeights& w, const K3Config& c, const SituParams& act, const float* x, int64_t R,
                FfnScratch& s, float* y, ThreadPool* pool);

// Whether MoeForward gives each thread whole experts (true) or runs one expert at a time with
// each of its products split over the threads, for `rows` routed rows over `active` experts.
// Whole experts when there are few rows per expert (decode: reading the weights dominates) or
// enough experts to balance the threads (prefill of a few hundred tokens over 64 experts: split
// products would re-quantise the rows per slice and wait on the pool three times per expert).
bool MoeSpreadsWholeExperts(int64_t rows, int64_t active, int threads);

}  // namespace kimi::model
