#include "api/request/sampling_rules.h"

#include <cmath>
#include <string>
#include <string_view>

namespace kimi::api::request {
namespace {

// Pinned values are compared with a tolerance: 0.95 may arrive as 0.9500000000000001.
constexpr double kPinTolerance = 1e-9;

Status CheckPinned(const Json& body, const char* field, const std::optional<double>& pin, double lo, double hi,
                   const char* range) {
  const Json* value = OptionalMember(body, field);
  if (value == nullptr) return Status::OK();
  double v = 0;
  KIMI_RETURN_IF_ERROR(ExpectNumber(*value, field, &v));
  if (pin) {
    if (std::fabs(v - *pin) > kPinTolerance) {
      return FieldError(field, "must be " + NumberText(*pin) + " for this model (got " + NumberText(v) + ")");
    }
  } else if (v < lo || v > hi) {
    return FieldError(field, std::string("must be in ") + range + " (got " + NumberText(v) + ")");
  }
  return Status::OK();
}

Status CheckTemperature(const Json& body, const ModelRequestRules& rules, ValidatedRequest* out) {
  const Json* value = OptionalMember(body, "temperature");
  if (value == nullptr) return Status::OK();
  double t = 0;
  KIMI_RETURN_IF_ERROR(ExpectNumber(*value, "temperature", &t));
  if (t < rules.temperature_min || t > rules.temperature_max) {
    return FieldError("temperature", "must be in [" + NumberText(rules.temperature_min) + ", " +
                                         NumberText(rules.temperature_max) + "] (got " + NumberText(t) + ")");
  }
  out->temperature = t;
  return Status::OK();
}

Status CheckN(const Json& body, const ModelRequestRules& rules) {
  const Json* value = OptionalMember(body, "n");
  if (value == nullptr) return Status::OK();
  int64_t n = 0;
  KIMI_RETURN_IF_ERROR(ExpectInteger(*value, "n", &n));
  if (rules.n && n != *rules.n) {
    return FieldError("n", "must be " + std::to_string(*rules.n) + " for this model (got " + std::to_string(n) + ")");
  }
  if (n < 1 || n > kMaxN) return FieldError("n", "must be in [1, " + std::to_string(kMaxN) + "] (got " + std::to_string(n) + ")");
  return Status::OK();
}

// The output caps as sent, for limits that name the field (the policy's). Their rule (an
// integer >= 1, max_completion_tokens winning) is the one reader's, kimi::ReadGenerationParams.
void RecordMaxTokens(const Json& body, ValidatedRequest* out) {
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    const Json* value = OptionalMember(body, field);
    int64_t limit = 0;
    if (value == nullptr || !ExpectInteger(*value, field, &limit).ok()) continue;
    (std::string_view(field) == "max_tokens" ? out->max_tokens_field : out->max_completion_tokens_field) = limit;
  }
}

// One stop string within the model's byte bound. Its type and that it is not empty are the
// one reader's rules (kimi::ReadGenerationParams).
Status CheckStopString(const Json& s, const std::string& field, const ModelRequestRules& rules) {
  if (!s.is_string()) return Status::OK();
  const size_t bytes = s.get_ref<const std::string&>().size();
  if (int64_t(bytes) > rules.max_stop_bytes) {
    return FieldError(field, "must be at most " + std::to_string(rules.max_stop_bytes) + " bytes for this model (got " +
                                 std::to_string(bytes) + ")");
  }
  return Status::OK();
}

// Every stop string is matched after every token on the scheduler thread: the list is bounded
// per model (OpenAI's 4 by default).
Status CheckStop(const Json& body, const ModelRequestRules& rules) {
  const Json* value = OptionalMember(body, "stop");
  if (value == nullptr) return Status::OK();
  if (!value->is_array()) return CheckStopString(*value, "stop", rules);
  if (int64_t(value->size()) > rules.max_stop) {
    return FieldError("stop", "must hold at most " + std::to_string(rules.max_stop) + " strings for this model (got " +
                                  std::to_string(value->size()) + ")");
  }
  for (size_t i = 0; i < value->size(); ++i) KIMI_RETURN_IF_ERROR(CheckStopString((*value)[i], Indexed("stop", i), rules));
  return Status::OK();
}

// logit_bias: token id -> bias, as OpenAI takes it. The ids must be tokens of the model's
// vocabulary and the map at most kMaxLogitBias entries, so the field stays small wherever it
// is forwarded or recorded.
Status CheckLogitBias(const Json& body, const ModelRequestRules& rules) {
  const Json* value = OptionalMember(body, "logit_bias");
  if (value == nullptr) return Status::OK();
  KIMI_RETURN_IF_ERROR(ExpectObject(*value, "logit_bias"));
  if (value->size() > kMaxLogitBias) {
    return FieldError("logit_bias", "must have at most " + std::to_string(kMaxLogitBias) + " entries (got " +
                                        std::to_string(value->size()) + ")");
  }
  for (const auto& [key, bias] : value->items()) {
    // The key is named in the error only once it is known to be digits (no spaces). Written as
    // the id is ("5", not "05"), so that no token is named twice with two biases.
    const std::optional<int32_t> id = LogitBiasTokenId(key);
    if (!id || *id >= rules.vocab_size) {
      return FieldError("logit_bias", "keys must be token ids in [0, " + std::to_string(rules.vocab_size) + ") for this model");
    }
    const std::string field = Member("logit_bias", key);
    double v = 0;
    KIMI_RETURN_IF_ERROR(ExpectNumber(bias, field, &v));
    if (v < -100 || v > 100) return FieldError(field, "must be in [-100, 100] (got " + NumberText(v) + ")");
  }
  return Status::OK();
}

Status CheckStream(const Json& body, ValidatedRequest* out) {
  if (const Json* stream = OptionalMember(body, "stream")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*stream, "stream"));
    out->stream = stream->get<bool>();
  }
  const Json* options = OptionalMember(body, "stream_options");
  if (options == nullptr) return Status::OK();
  KIMI_RETURN_IF_ERROR(ExpectObject(*options, "stream_options"));
  if (!out->stream) return FieldError("stream_options", "is allowed only when stream is true");
  if (const Json* include = OptionalMember(*options, "include_usage")) {
    KIMI_RETURN_IF_ERROR(ExpectBool(*include, "stream_options.include_usage"));
    out->include_usage = include->get<bool>();
  }
  return Status::OK();
}

}  // namespace

Status CheckSamplingFields(const Json& body, const ModelRequestRules& rules, ValidatedRequest* out) {
  const Json* model = OptionalMember(body, "model");
  if (model == nullptr) return FieldError("model", "is required");
  KIMI_RETURN_IF_ERROR(ExpectString(*model, "model"));
  if (model->get_ref<const std::string&>().empty()) return FieldError("model", "must not be empty");
  out->model = model->get<std::string>();

  KIMI_RETURN_IF_ERROR(CheckTemperature(body, rules, out));
  KIMI_RETURN_IF_ERROR(CheckPinned(body, "top_p", rules.top_p, 0.0, 1.0, "[0, 1]"));
  KIMI_RETURN_IF_ERROR(CheckPinned(body, "presence_penalty", rules.presence_penalty, -2.0, 2.0, "[-2, 2]"));
  KIMI_RETURN_IF_ERROR(CheckPinned(body, "frequency_penalty", rules.frequency_penalty, -2.0, 2.0, "[-2, 2]"));
  KIMI_RETURN_IF_ERROR(CheckN(body, rules));
  RecordMaxTokens(body, out);
  KIMI_RETURN_IF_ERROR(CheckStop(body, rules));
  KIMI_RETURN_IF_ERROR(CheckLogitBias(body, rules));
  if (const Json* seed = OptionalMember(body, "seed")) {
    int64_t s = 0;
    KIMI_RETURN_IF_ERROR(ExpectInteger(*seed, "seed", &s));
    out->seed = s;
  }
  return CheckStream(body, out);
}

}  // namespace kimi::api::request
