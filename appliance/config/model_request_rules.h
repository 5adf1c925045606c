// ModelRequestRules: the sampling-parameter bounds one model accepts, as a per-model setting.
//
// Moonshot's vendor verifier requires K3 to accept temperature in [0, 1] only and to reject
// any top_p other than 0.95, any presence or frequency penalty other than 0 and any n other
// than 1. Those are K3()'s values and the defaults of FromJson(); another model can carry
// different ones in the daemon configuration:
//   {"temperature": [0, 1], "top_p": 0.95, "presence_penalty": 0, "frequency_penalty": 0, "n": 1,
//    "max_stop": 4, "max_stop_bytes": 256, "vocab_size": 163840}
// A null pin means "any value in OpenAI's own range" (top_p in [0, 1], penalties in [-2, 2],
// n in [1, kMaxN]). max_stop / max_stop_bytes bound the `stop` list (OpenAI's 4 strings by
// default; at most the engine's kMaxStopStrings / kMaxStopStringBytes); vocab_size bounds the
// token ids `logit_bias` may name (K3's vocabulary by default).
//
// Kept in config/, which validates the configuration's request_rules with FromJson(), so that
// the configuration depends on nothing above it; api/ (namespace api, as here) applies them.
// Public header of config/: other folders include it.
// A plain value type. Thread safety: immutable once built; share freely for reading.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::api {

// The largest n any model accepts (OpenAI's bound): each choice is a generation of its own.
inline constexpr int64_t kMaxN = 128;

struct ModelRequestRules {
  double temperature_min = 0.0;
  double temperature_max = 1.0;
  // A request that sets the parameter must set exactly this value; nullopt: no pin.
  std::optional<double> top_p = 0.95;
  std::optional<double> presence_penalty = 0.0;
  std::optional<double> frequency_penalty = 0.0;
  std::optional<int64_t> n = 1;
  int64_t max_stop = 4;
  int64_t max_stop_bytes = 256;
  int64_t vocab_size = 163840;

  // Kimi K3's rules (the defaults above).
  static ModelRequestRules K3();

  // Reads the JSON form in the header comment. Absent keys keep K3's value; null removes a
  // pin. Errors (InvalidArgument naming the key): unknown keys, wrong types, an empty or
  // inverted temperature range, values outside OpenAI's ranges or the engine's stop bounds.
  static Result<ModelRequestRules> FromJson(const nlohmann::json& config);
  nlohmann::json ToJson() const;

  bool operator==(const ModelRequestRules&) const = default;
};

}  // namespace kimi::api
