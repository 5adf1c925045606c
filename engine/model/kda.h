// The KDA (Kimi Delta Attention) layer, docs/engine.md "KDA layer": q/k/v projections with a
// causal conv and SiLU, L2-normalised q and k, per-channel decay gate, per-head write strength,
// the delta-rule recurrence (chunked for multi-token segments, token by token for one token),
// o_norm, the sigmoid output gate and o_proj.
//
// Owns: nothing but views of its weights. Scratch comes from the caller.
// Thread safety: Forward mutates only the segments' states and the scratch.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kimi/config.h"
#include "model/batch.h"
#include "model/linear.h"
#include "model/weight_binder.h"

namespace kimi::model {

// Sizes from the config: D hidden, H heads of d, P = H·d, K conv width.
struct KdaDims {
  int64_t D, H, d, P, K;
  std::optional<float> lower_bound;  // gate_lower_bound (K3: −5)
  float eps;                         // o_norm (rms_norm_eps)
  explicit KdaDims(const K3Config& c);
};

struct KdaWeights {
  DenseMatrix q_proj, k_proj, v_proj;         // [P, D]
  std::vector<float> q_conv, k_conv, v_conv;  // [P, K] depthwise taps, tap K−1 = current token
  std::vector<float> a_log;                   // [H] (first H stored entries)
  std::vector<float> dt_bias;                 // [P]
  DenseMatrix f_a;                            // [d, D]
  DenseMatrix f_b;                            // [P, d]
  DenseMatrix b_proj;                         // [H, D]
  DenseMatrix g_proj;                         // [P, D] (use_full_rank_gate)
  DenseMatrix g_a, g_b;                       // [d, D], [P, d] (low-rank gate otherwise)
  std::vector<float> o_norm;                  // [d]
  DenseMatrix o_proj;                         // [D, P]

  void Bind(WeightBinder& binder, const std::string& prefix, const KdaDims& dims, bool full_rank_gate);
  uint64_t MatrixBytes() const;
  uint64_t MatrixElements() const;
};

// Activations of one pass, R rows.
struct KdaScratch {
  std::vector<float> q_pre, k_pre, v_pre;  // [R, P] projections before the conv
  std::vector<float> q, k, v;              // [R, P] after conv + SiLU (q, k then L2-normalised)
  std::vector<float> f_low;                // [R, d] f_a u
  std::vector<float> g_low;                // [R, d] g_a u (low-rank output gate only)
  std::vector<float> f;                    // [R, P] f_b f_a u
  std::vector<float> g;                    // [R, P] log decay per key channel
  std::vector<float> beta;                 // [R, H]
  std::vector<float> gate;                 // [R, P] the output gate's logits
  std::vector<float> o;                    // [R, P] attention output
  ProductBatch batch;                  // products sharing one parallel region
  std::vector<kernels::KdaArgs> decodes;   // the one-token segments' recurrences of a pass
};

KdaLayerState NewKdaState(const KdaDims& dims);

// The KdaArgs of the rows [begin, begin + count) of one pass's q, k, v, g ([R, P]), β ([R, H])
// and output o ([R, P]), continuing `state` ([H, d, d]); scale 1, as it is folded into the L2
// normalisation of q. Shared by the CPU pass and the GPU pass (gpu/gpu_model.cc).
kernels::KdaArgs SegmentKdaArgs(const KdaDims& dims, const float* q, const float* k, const float* v, const float* g,
                                const float* beta, int64_t begin, int64_t count, float* state, float* o);

// y[R, D] = KDA(u[R, D]); each segment continues from its state's kda[slot] and leaves it updated.
void KdaForward(const KdaWeights& w, const KdaDims& dims, const float* u, int64_t R, Segments segments,
                int slot, KdaScratch& s, float* y, ThreadPool* pool);

}  // namespace kimi::model
