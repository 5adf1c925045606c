// The Gated MLA layer (NoPE), docs/engine.md "Gated MLA layer": low-rank query, a shared latent
// c_kv (RMS-normalised) and k_pe per token, attention in the absorbed form over the sequence's
// paged latent cache (prefill and decode alike), W_UV, the sigmoid output gate and o_proj.
//
// Owns: nothing but views of its weights. Scratch comes from the caller.
// Thread safety: Forward mutates only the segments' states and the scratch.
#pragma once

#include <cstdint>
#include <vector>

#include "kimi/config.h"
#include "model/batch.h"
#include "model/linear.h"
#include "model/weight_binder.h"

namespace kimi::model {

// Sizes from the config: D hidden, H heads; dn/dr/dv head dims; rq/rc ranks.
struct MlaDims {
  int64_t D, H, dn, dr, dv, rq, rc;
  float scale;  // (dn + dr)^-0.5
  explicit MlaDims(const K3Config& c);
  int64_t q_width() const { return H * (dn + dr); }
  int64_t row_width() const { return rc + dr; }  // one cached token
};

struct MlaWeights {
  DenseMatrix q_a;                 // [rq, D]   (q_lora_rank > 0)
  std::vector<float> q_a_norm;     // [rq]
  DenseMatrix q_b;                 // [H(dn+dr), rq]
  DenseMatrix q_proj;              // [H(dn+dr), D] (q_lora_rank == 0)
  DenseMatrix kv_a;                // [rc+dr, D]: c̃ rows then k_pe rows
  std::vector<float> kv_a_norm;    // [rc]
  Bf16Matrix kv_b;                 // [H(dn+dv), rc]: per head W_UK (dn rows) then W_UV (dv rows)
  DenseMatrix g_proj;              // [H dv, D] (mla_use_output_gate)
  DenseMatrix o_proj;              // [D, H dv]

  void Bind(WeightBinder& binder, const std::string& prefix, const MlaDims& dims, const K3Config& c);
  uint64_t MatrixBytes() const;
  uint64_t MatrixElements() const;
};

struct MlaScratch {
  std::vector<float> c_q;       // [R, rq]
  std::vector<float> q;         // [R, H(dn+dr)]
  std::vector<float> kv;        // [R, rc+dr]
  std::vector<float> q_latent;  // [R, H, rc]  W_UKᵀ q_nope
  std::vector<float> q_pe;      // [R, H, dr]
  std::vector<float> o_latent;  // [R, H, rc]
  std::vector<float> o;         // [R, H dv]
  std::vector<float> gate;      // [R, H dv]
  ProductBatch batch;       // products sharing one parallel region
};

MlaLatentCache NewMlaCache(const MlaDims& dims, int64_t page_tokens);

// y[R, D] = MLA(u[R, D]); each segment appends its tokens to its state's mla[slot] and attends
// over everything cached for its sequence.
void MlaForward(const MlaWeights& w, const MlaDims& dims, const float* u, int64_t R, Segments segments,
                int slot, MlaScratch& s, float* y, ThreadPool* pool);

}  // namespace kimi::model
