// Size arithmetic of a Kimi K3 model from its config alone: parameters and stored bytes per
// component (BF16, MXFP4 routed experts when quantised, the dense projections in the format the
// quantization_config gives the first layer of their kind), the bytes of weights read to
// decode one token (only the top-k routed experts of each MoE layer), and the per-token MLA
// latent cache and per-sequence KDA state the runtime must hold.
//
// Computed in closed form, independently of the tensor table in k3_tensors.h; the tests check
// that the two agree. Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kimi/config.h"
#include "kimi/k3_tensors.h"

namespace kimi {

struct ComponentSize {
  uint64_t params = 0;  // logical parameters (an MXFP4 element counts as one)
  uint64_t bytes = 0;   // bytes stored in the checkpoint
};

struct K3SizeReport {
  std::array<ComponentSize, kNumTensorGroups> groups{};  // indexed by TensorGroup
  ComponentSize total;

  // Per decoded token: the embedding row, every dense weight, the router, the shared experts,
  // and num_experts_per_token routed experts per MoE layer.
  uint64_t active_params_per_token = 0;
  uint64_t weight_bytes_per_token = 0;
  // weight_bytes_per_token by tensor group (indexed by TensorGroup); they sum to it.
  std::array<uint64_t, kNumTensorGroups> bytes_per_token_by_group{};

  int64_t kda_layers = 0, mla_layers = 0, moe_layers = 0, dense_mlp_layers = 0;

  // MLA keeps only the compressed latent and the shared rope key per token and layer.
  uint64_t mla_cache_values_per_token = 0;  // (kv_lora_rank + qk_rope_head_dim) · MLA layers
  uint64_t MlaCacheBytesPerToken(uint64_t bytes_per_value) const {
    return mla_cache_values_per_token * bytes_per_value;
  }

  // KDA keeps, per sequence, an fp32 head_dim×head_dim state per head and the last
  // short_conv_kernel_size−1 inputs of the q, k and v convolutions (fp32), per KDA layer.
  uint64_t kda_recurrent_state_bytes = 0;
  uint64_t kda_conv_state_bytes = 0;
  uint64_t KdaStateBytesPerSequence() const { return kda_recurrent_state_bytes + kda_conv_state_bytes; }

  const ComponentSize& group(TensorGroup g) const { return groups[static_cast<int>(g)]; }
};

// Precondition: ValidateK3Config(config) passed.
K3SizeReport ComputeK3Sizes(const K3Config& config);

// "1.23 GiB", "2.78 T" etc.
std::string FormatBytes(uint64_t bytes);
std::string FormatCount(uint64_t count);

// A readable multi-line table of the report (what `kimi-engine info` prints).
std::string FormatSizeReport(const K3Config& config, const K3SizeReport& report);

// The bytes read per decoded token by part, and with `bandwidth_gb_per_s` > 0 the batch-1
// decode rate that bandwidth allows at most (each token reads every byte once).
std::string FormatDecodeBytes(const K3SizeReport& report, double bandwidth_gb_per_s);

}  // namespace kimi
