// Rewrites a BF16 Kimi K3 model directory with its dense projections quantised (what
// `kimi-engine quantize` runs): the KDA and MLA projections (all but kv_b_proj, which the absorbed
// attention reads transposed per head), the dense and shared-expert MLPs and the latent
// projections. Embeddings, lm_head, the router, kv_b_proj, the residual projections, norms and
// vectors are copied as they are; so are the routed experts (already MXFP4).
//
// Schemes, both compressed-tensors formats (kimi/quantization.h, docs/engine.md):
//   kInt8:       pack-quantized, 8-bit symmetric int per output channel: scale = max|w_row|/127,
//                q = round-half-even(w/scale) in [-127, 127].
//   kMxfp4Dense: mxfp4-pack-quantized, E2M1 in blocks of 32 with an E8M0 scale (QuantizeMxfp4Block).
//
// The output keeps the input's shard files (same names, each holding the same tensors
// rewritten), rewrites the index and config.json's quantization_config, and copies every other
// file unchanged except a signature (model.sig), which no longer matches: `kimictl model sign`
// signs the output. It is written into a temporary sibling directory and renamed into place, so
// `out` either appears complete or not at all; an existing `out` is refused.
//
// Thread safety: one call at a time per output directory.
#pragma once

#include <cstdint>
#include <string>

#include "kimi/quantization.h"
#include "kimi/status.h"

namespace kimi {

enum class QuantScheme { kInt8, kMxfp4Dense };

// "int8" or "mxfp4-dense"; InvalidArgument naming the choices otherwise.
Result<QuantScheme> ParseQuantScheme(const std::string& name);

// The quantization_config of a model whose config had `old`, its dense projections in `scheme`
// (the routed experts keep their MXFP4 group; docs/weights.md shows the result).
QuantizationConfig QuantizedDenseConfig(const QuantizationConfig& old, QuantScheme scheme);

struct QuantizeSummary {
  int64_t matrices = 0;       // dense matrices quantised
  uint64_t bytes_before = 0;  // their BF16 bytes
  uint64_t bytes_after = 0;   // their quantised bytes (values and scales)
};

// Errors: NotFound (no `in` directory), AlreadyExists (`out` exists), InvalidArgument (not a
// K3 model, a shape-only one, or one whose dense projections are already quantised), IOError.
Result<QuantizeSummary> QuantizeModelDir(const std::string& in, const std::string& out, QuantScheme scheme);

}  // namespace kimi
