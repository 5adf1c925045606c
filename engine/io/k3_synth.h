// Writes synthetic Kimi K3 model directories: config.json, safetensors shards with the published
// tensor names (under `language_model.`), dtypes and shapes, and model.safetensors.index.json.
// Weights are random but deterministic in (seed, tensor name), scaled so activations stay
// sane: Linear weights ~ N(0, 1/fan_in), norm gains ~ U(0.9, 1.1), embeddings ~ N(0, 1),
// A_log = log U(1, 16), routed experts quantised to MXFP4 from the same normal draw.
// Tensors are generated and written one at a time, so memory stays at one tensor.
//
// A shape-only directory (for the full-size config) has config.json and an index whose
// "tensor_specs" object records every tensor's dtype and shape, and no shards.
//
// Thread safety: functions may run concurrently on different directories.
#pragma once

#include <cstdint>
#include <string>

#include "kimi/config.h"
#include "kimi/status.h"

namespace kimi {

struct SynthOptions {
  uint64_t seed = 0;
  uint64_t max_shard_bytes = 64ull << 20;  // a shard closes before it would pass this
  // Leave every matrix (each 2-D tensor: Linear weights, embeddings, MXFP4 halves) unwritten:
  // holes that read as zeros and cost no disk or time, for a consumer that generates the
  // matrices itself (engine/gpu's device fill). Vectors and conv taps are written as usual.
  bool matrices_unwritten = false;
};

struct SynthSummary {
  uint64_t tensors = 0;
  uint64_t bytes = 0;  // tensor data, all shards
  int shards = 0;
};

// Creates `out_dir` if needed and writes the model. Existing files of the same names are replaced.
Result<SynthSummary> WriteSyntheticModel(const K3Config& config, const std::string& out_dir,
                                         const SynthOptions& options);
Result<SynthSummary> WriteShapeOnlyModel(const K3Config& config, const std::string& out_dir,
                                         uint64_t max_shard_bytes);

// The shard file name HF tools use: "model-00001-of-00004.safetensors".
std::string ShardFileName(int index, int count);

}  // namespace kimi
