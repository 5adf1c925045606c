// The quantization_config object of a config.json, as K3ConfigToJson writes it (compressed-tensors
// keys: quant_method, format, ignore, config_groups with each group's format, targets and weights).
// Internal to kimi_io. Thread safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "kimi/quantization.h"

namespace kimi {

// Precondition: q.present.
nlohmann::ordered_json QuantizationToJson(const QuantizationConfig& q);

}  // namespace kimi
