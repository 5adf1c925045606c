#include "gpu/bench_presets.h"

#include "io/k3_presets.h"

namespace kimi::gpu {

Result<K3Config> GpuBenchPreset(std::string_view name) {
  if (name != "k3-h200-40g") {
    return Status::NotFound("unknown GPU benchmark preset '" + std::string(name) + "' (known: k3-h200-40g)");
  }
  KIMI_ASSIGN_OR_RETURN(K3Config c, K3Preset("k3-full-shape"));
  c.num_hidden_layers = 8;
  c.num_experts = 192;
  // The published pattern (every 4th layer and the last are MLA) over the shorter stack.
  c.linear_attn.kda_layers.clear();
  c.linear_attn.full_attn_layers.clear();
  for (int64_t l = 1; l <= c.num_hidden_layers; ++l) {
    auto& layers = (l % 4 == 0 || l == c.num_hidden_layers) ? c.linear_attn.full_attn_layers : c.linear_attn.kda_layers;
    layers.push_back(l);
  }
  return c;
}

std::vector<std::string> GpuBenchPresetNames() { return {"k3-h200-40g"}; }

}  // namespace kimi::gpu
