#include "config/model_request_rules.h"

#include <string>

#include "kimi/runtime.h"

namespace kimi::api {
namespace {

using nlohmann::json;

Status KeyError(const std::string& key, const std::string& problem) {
  return Status::InvalidArgument("request_rules." + key + " " + problem);
}

// A pinned number: a number within [lo, hi], or null for no pin.
Status ReadPin(const json& value, const std::string& key, double lo, double hi, const char* range,
               std::optional<double>* out) {
  if (value.is_null()) {
    out->reset();
    return Status::OK();
  }
  if (!value.is_number()) return KeyError(key, "must be a number or null");
  const double v = value.get<double>();
  if (v < lo || v > hi) return KeyError(key, std::string("must be in ") + range);
  *out = v;
  return Status::OK();
}

// A bound: an integer in [1, most].
Status ReadCount(const json& value, const std::string& key, int64_t most, int64_t* out) {
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > most) {
    return KeyError(key, "must be an integer in [1, " + std::to_string(most) + "]");
  }
  *out = value.get<int64_t>();
  return Status::OK();
}

}  // namespace

ModelRequestRules ModelRequestRules::K3() { return ModelRequestRules{}; }

Result<ModelRequestRules> ModelRequestRules::FromJson(const json& config) {
  if (!config.is_object()) return Status::InvalidArgument("request_rules must be an object");
  ModelRequestRules rules = K3();
  for (const auto& [key, value] : config.items()) {
    if (key == "temperature") {
      if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
        return KeyError(key, "must be [min, max]");
      }
      rules.temperature_min = value[0].get<double>();
      rules.temperature_max = value[1].get<double>();
      if (rules.temperature_min < 0 || rules.temperature_max > 2 || rules.temperature_min > rules.temperature_max) {
        return KeyError(key, "must be a range within [0, 2] with min <= max");
      }
    } else if (key == "top_p") {
      KIMI_RETURN_IF_ERROR(ReadPin(value, key, 0.0, 1.0, "[0, 1]", &rules.top_p));
    } else if (key == "presence_penalty") {
      KIMI_RETURN_IF_ERROR(ReadPin(value, key, -2.0, 2.0, "[-2, 2]", &rules.presence_penalty));
    } else if (key == "frequency_penalty") {
      KIMI_RETURN_IF_ERROR(ReadPin(value, key, -2.0, 2.0, "[-2, 2]", &rules.frequency_penalty));
    } else if (key == "n") {
      if (value.is_null()) {
        rules.n.reset();
      } else if (value.is_number_integer() && value.get<int64_t>() >= 1 && value.get<int64_t>() <= kMaxN) {
        rules.n = value.get<int64_t>();
      } else {
        return KeyError(key, "must be an integer in [1, " + std::to_string(kMaxN) + "] or null");
      }
    } else if (key == "max_stop") {
      KIMI_RETURN_IF_ERROR(ReadCount(value, key, int64_t(kMaxStopStrings), &rules.max_stop));
    } else if (key == "max_stop_bytes") {
      KIMI_RETURN_IF_ERROR(ReadCount(value, key, int64_t(kMaxStopStringBytes), &rules.max_stop_bytes));
    } else if (key == "vocab_size") {
      KIMI_RETURN_IF_ERROR(ReadCount(value, key, int64_t(1) << 24, &rules.vocab_size));
    } else {
      return KeyError(key,
                      "is not a known rule (known: temperature, top_p, presence_penalty, frequency_penalty, n, max_stop, "
                      "max_stop_bytes, vocab_size)");
    }
  }
  return rules;
}

json ModelRequestRules::ToJson() const {
  auto pin = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return json{{"temperature", {temperature_min, temperature_max}},
              {"top_p", pin(top_p)},
              {"presence_penalty", pin(presence_penalty)},
              {"frequency_penalty", pin(frequency_penalty)},
              {"n", pin(n)},
              {"max_stop", max_stop},
              {"max_stop_bytes", max_stop_bytes},
              {"vocab_size", vocab_size}};
}

}  // namespace kimi::api
