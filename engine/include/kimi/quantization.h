// The compressed-tensors `quantization_config` of a K3 checkpoint, and which of its Linear
// matrices it stores quantised. Two schemes are supported (docs/engine.md, "Quantized weights"):
//   * `mxfp4-pack-quantized` (4-bit float, group strategy, group 32): `weight_packed` U8
//     [out, in/2] + `weight_scale` U8 E8M0 [out, in/32]; the routed experts always, the dense
//     projections after `kimi-engine quantize --scheme mxfp4-dense`.
//   * `pack-quantized` 8-bit int, channel strategy, symmetric (W8A16): `weight_packed` I32
//     [out, in/4] (four int8 values + 128 per word, element 4j+i in bits 8i..8i+7),
//     `weight_scale` F32 [out, 1], `weight_shape` I32 [2]; after `--scheme int8`.
//
// A module (a tensor name without ".weight") takes the first of: BF16 when it matches an
// `ignore` entry; else the group with a target naming it exactly, else one whose "re:" regex
// target matches it from its start, else one targeting the class "Linear". This is the order of
// compressed-tensors' matcher. Only the modules the engine can run quantised are ever looked up
// (kimi/k3_tensors.h): embeddings, lm_head, the router, kv_b_proj and the residual projections
// stay BF16 whatever the config says.
//
// Thread safety: values and a matcher that is immutable after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/dtype.h"
#include "kimi/status.h"

namespace kimi {

inline constexpr std::string_view kMxfp4PackFormat = "mxfp4-pack-quantized";
inline constexpr std::string_view kIntPackFormat = "pack-quantized";
inline constexpr std::string_view kMixedPrecisionFormat = "mixed-precision";
// The target naming every routed expert matrix (model.layers.L.block_sparse_moe.experts.E.w1).
inline constexpr std::string_view kRoutedExpertsTarget = "re:.*block_sparse_moe\\.experts\\..*";

// How one Linear matrix is stored.
enum class MatrixFormat { kBf16, kInt8Channel, kMxfp4 };
std::string_view MatrixFormatName(MatrixFormat format);

// The weight data of a rows × cols matrix stored in `format`, which is what a product with it
// reads: BF16 values; int8 values and an F32 scale per row; MXFP4 nibbles and an E8M0 scale per
// block of 32. (An int8 matrix's 8-byte `weight_shape` tensor is in the file, not in this.)
constexpr uint64_t MatrixWeightBytes(MatrixFormat format, uint64_t rows, uint64_t cols) {
  const uint64_t n = rows * cols;
  switch (format) {
    case MatrixFormat::kBf16: return 2 * n;
    case MatrixFormat::kInt8Channel: return n + 4 * rows;
    case MatrixFormat::kMxfp4: return n / 2 + n / kMxfp4BlockSize;
  }
  return 0;
}

// One entry of config_groups.
struct QuantizationGroup {
  std::string name;                  // its key, "group_0"
  std::string format;                // empty: the config's top-level format applies
  std::vector<std::string> targets;  // "Linear", a module name, or "re:" + a regex
  int64_t num_bits = 4;
  std::string type = "float";        // weights.type: "float" or "int"
  std::string strategy = "group";    // weights.strategy: "group" or "channel"
  int64_t group_size = 32;           // 0 when null (channel strategy)
  bool symmetric = true;
};

// compressed-tensors settings; `present` is false for an unquantised model. A config without
// config_groups (as some published configs are written) quantises the routed experts only, in
// the top-level `format` with 4 bits in groups of 32.
struct QuantizationConfig {
  bool present = false;
  std::string quant_method;  // "compressed-tensors"
  std::string format;        // a scheme's format, or "mixed-precision" when groups differ
  std::vector<std::string> ignore;
  std::vector<QuantizationGroup> groups;

  // The groups in effect: `groups`, or the routed-experts group a config without groups implies.
  std::vector<QuantizationGroup> EffectiveGroups() const;
  // True when some group stores MXFP4 (the routed experts must be in one; ValidateQuantization).
  bool HasMxfp4() const;
};

// The stored format of a group, or why the engine cannot read it.
Result<MatrixFormat> GroupFormat(const QuantizationConfig& q, const QuantizationGroup& g);

// Resolves modules to groups (the rules above). Compiles the regexes once.
class QuantizationMatcher {
 public:
  // Precondition: ValidateQuantization(q) passed (every regex compiles).
  explicit QuantizationMatcher(const QuantizationConfig& q);
  ~QuantizationMatcher();
  QuantizationMatcher(const QuantizationMatcher&) = delete;
  QuantizationMatcher& operator=(const QuantizationMatcher&) = delete;

  // The format of Linear module `module` (with or without the published "language_model." prefix).
  MatrixFormat FormatOf(std::string_view module) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

// Checks every group's scheme and regex; `prefix` ("path: text_config.quantization_config.")
// starts each message.
Status ValidateQuantization(const QuantizationConfig& q, const std::string& prefix);

}  // namespace kimi
