// Synthetic K3 configurations for timing the GPU forward pass at a size that fills a good part
// of a card, too large for the synthetic writer to put on disk in a benchmark's time: they are
// written with SynthOptions::matrices_unwritten and run with GpuModelOptions::synthetic_fill_seed
// (docs/gpu.md). Every width is the published model's; only the depth and the expert count are
// cut:
//   k3-h200-40g  the published K3 (hidden 7168, 96 KDA heads of 128, MLA q_lora 1536 /
//                kv_lora 512, dense MLP 33792, experts 3072 wide over the 3584 latent, 16 of
//                them per token, 2 shared, vocabulary 163840) with 8 layers (KDA 1–3, 5–7;
//                MLA 4, 8; layer 1 dense) and 192 routed experts per MoE layer instead of 93
//                and 896: 38.6 GB of weights, 14.6 GB read per decoded token.
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kimi/config.h"
#include "kimi/status.h"

namespace kimi::gpu {

Result<K3Config> GpuBenchPreset(std::string_view name);
std::vector<std::string> GpuBenchPresetNames();

}  // namespace kimi::gpu
