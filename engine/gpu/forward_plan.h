// Host-side planning for the GPU forward pass (gpu_model.h), kept apart from any device code so
// it is unit-tested on CPU machines:
//   * ActivationPlan: where every activation of one pass of up to `rows` rows lives in the one
//     device buffer the model allocates for them (byte offsets, 256-byte aligned slices);
//   * ExpertPlan: the routed rows of one MoE layer grouped by expert, as model::MoeForward
//     groups them (experts in ascending order, each expert's rows in token order), plus the
//     per-token list of (packed row, weight) in expert order that the combine kernel sums.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "kimi/config.h"
#include "kimi/status.h"

namespace kimi::gpu {

struct ActivationPlan {
  struct Slice {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  static constexpr uint64_t kAlignment = 256;

  int64_t rows = 0;       // rows of one pass
  int64_t snapshots = 0;  // attention-residual block snapshots (ceil(L / block), 0 without)

  // Residual stream and head ([rows, D] floats unless noted).
  Slice tokens;                         // int32 [rows]
  Slice partial, mixed, normed, out;
  Slice blocks;                         // [snapshots, rows, D]
  Slice logit_rows;                     // int32 [rows]
  Slice head_in;                        // [rows, D]
  Slice logits;                         // [rows, V]
  // KDA ([rows, P] unless noted).
  Slice kda_q_pre, kda_k_pre, kda_v_pre, kda_q, kda_k, kda_v, kda_f, kda_g, kda_gate, kda_o;
  Slice kda_f_low, kda_g_low;           // [rows, d]
  Slice kda_beta;                       // [rows, H]
  // MLA.
  Slice mla_c_q;                        // [rows, rq]
  Slice mla_q;                          // [rows, H(dn+dr)]
  Slice mla_kv;                         // [rows, rc+dr]
  Slice mla_q_latent, mla_o_latent;     // [rows, H, rc]
  Slice mla_q_pe;                       // [rows, H, dr]
  Slice mla_o, mla_gate;                // [rows, H dv]
  // Feed-forward.
  Slice ffn_gate, ffn_up;               // [rows, max(dense width, shared width)]
  Slice router_logits;                  // [rows, E]
  Slice route_ids;                      // int32 [rows, k]
  Slice route_weights;                  // [rows, k]
  Slice latent, acc;                    // [rows, Dl]
  Slice rows_in, rows_out;              // [rows·k, Dl]
  Slice expert_gate, expert_up;         // [rows·k, F]
  Slice ffn_out2;                       // [rows, D] the shared experts' output
  // int32: source rows [rows·k] | row_begin [rows+1] | packed [rows·k] | then per active expert
  // group (at most min(E, rows·k)): expert | first | count.
  Slice plan_ints;
  int64_t max_groups = 0;
  Slice plan_weights;                   // [rows·k]

  uint64_t total_bytes = 0;

  // InvalidArgument for rows < 1.
  static Result<ActivationPlan> For(const K3Config& c, int64_t rows);
};

struct ExpertPlan {
  struct Active {
    int32_t expert;
    int32_t first;  // its first row among the packed rows
    int32_t count;
  };
  std::vector<Active> active;        // chosen experts, ascending
  std::vector<int32_t> source_row;   // [R·k] packed row → token row
  std::vector<int32_t> row_begin;    // [R+1] token r's entries are [row_begin[r], row_begin[r+1])
  std::vector<int32_t> packed;       // [R·k] the entry's packed row
  std::vector<float> weight;         // [R·k] the entry's routing weight

  // ids, weights: [R, k] as TopKRoute gives them (distinct experts per token).
  // InvalidArgument for an id outside [0, E).
  static Result<ExpertPlan> Build(const int32_t* ids, const float* weights, int64_t R, int k, int64_t E);
};

}  // namespace kimi::gpu
