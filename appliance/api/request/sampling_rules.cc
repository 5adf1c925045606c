#include "api/request/sampling_rules.h"

#include <cmath>

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
  if (n < 1) return FieldError("n", "must be at least 1");
  return Status::OK();
}

Status CheckMaxTokens(const Json& body, ValidatedRequest* out) {
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    const Json* value = OptionalMember(body, field);
    if (value == nullptr) continue;
    int64_t limit = 0;
    KIMI_RETURN_IF_ERROR(ExpectInteger(*value, field, &limit));
    if (limit < 1) return FieldError(field, "must be at least 1 (got " + std::to_string(limit) + ")");
    out->max_tokens = limit;  // max_completion_tokens, checked second, wins: it replaced max_tokens
  }
  return Status::OK();
}

Status CheckStop(const Json& body, ValidatedRequest* out) {
  const Json* value = OptionalMember(body, "stop");
  if (value == nullptr) return Status::OK();
  if (value->is_string()) {
    if (value->get_ref<const std::string&>().empty()) return FieldError("stop", "must not be empty");
    out->stop.push_back(value->get<std::string>());
    return Status::OK();
  }
  if (!value->is_array()) return FieldError("stop", "must be a string or an array of strings");
  for (size_t i = 0; i < value->size(); ++i) {
    const Json& s = (*value)[i];
    KIMI_RETURN_IF_ERROR(ExpectString(s, Indexed("stop", i)));
    if (s.get_ref<const std::string&>().empty()) return FieldError(Indexed("stop", i), "must not be empty");
    out->stop.push_back(s.get<std::string>());
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
  KIMI_RETURN_IF_ERROR(CheckMaxTokens(body, out));
  KIMI_RETURN_IF_ERROR(CheckStop(body, out));
  if (const Json* seed = OptionalMember(body, "seed")) {
    int64_t s = 0;
    KIMI_RETURN_IF_ERROR(ExpectInteger(*seed, "seed", &s));
    out->seed = s;
  }
  return CheckStream(body, out);
}

}  // namespace kimi::api::request
