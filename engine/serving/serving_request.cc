// ReadServingRequest: an OpenAI body read into the engine's typed request (kimi/serving_request.h).
#include "kimi/serving_request.h"

#include <cmath>
#include <string>

#include "kimi/json_integer.h"
#include "kimi/runtime.h"
#include "kimi/sampler.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;

bool Present(const Json& body, const char* key) { return body.contains(key) && !body[key].is_null(); }

Result<double> Number(const Json& body, const char* key) {
  if (!body[key].is_number()) return Status::InvalidArgument(std::string(key) + " must be a number");
  return body[key].get<double>();
}

// An integer as the appliance's request rules read it (kimi/json_integer.h).
Result<int64_t> Integer(const Json& body, const char* key) {
  if (const std::optional<int64_t> n = JsonInteger(body[key])) return *n;
  return Status::InvalidArgument(std::string(key) + " must be an integer within 64 bits");
}

// `stop`: a non-empty string, or an array of them. Messages name the element at fault.
Result<std::vector<std::string>> StopStrings(const Json& stop) {
  std::vector<std::string> out;
  auto add = [&out](const Json& s, const std::string& field) -> Status {
    if (!s.is_string()) return Status::InvalidArgument(field + " must be a string");
    if (s.get_ref<const std::string&>().empty()) return Status::InvalidArgument(field + " must not be empty");
    out.push_back(s.get<std::string>());
    return Status::OK();
  };
  if (stop.is_string()) {
    KIMI_RETURN_IF_ERROR(add(stop, "stop"));
  } else if (stop.is_array()) {
    for (size_t i = 0; i < stop.size(); ++i) KIMI_RETURN_IF_ERROR(add(stop[i], "stop[" + std::to_string(i) + "]"));
  } else {
    return Status::InvalidArgument("stop must be a string or an array of strings");
  }
  return out;
}

// The prompt of a /v1/completions body: a string, or an array holding one string.
Result<std::string> CompletionPrompt(const Json& body) {
  if (!body.contains("prompt")) return Status::InvalidArgument("prompt is required");
  const Json& prompt = body["prompt"];
  if (prompt.is_string()) return prompt.get<std::string>();
  if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) return prompt[0].get<std::string>();
  return Status::InvalidArgument("prompt must be a string (or an array of one string)");
}

}  // namespace

Result<GenerationParams> ReadGenerationParams(const Json& body) {
  if (!body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  GenerationParams p;
  SamplingParams& s = p.sampling;
  struct FloatField {
    const char* key;
    float SamplingParams::*member;
  };
  for (const FloatField& f : {FloatField{"temperature", &SamplingParams::temperature},
                              FloatField{"top_p", &SamplingParams::top_p},
                              FloatField{"presence_penalty", &SamplingParams::presence_penalty},
                              FloatField{"frequency_penalty", &SamplingParams::frequency_penalty}}) {
    if (!Present(body, f.key)) continue;
    KIMI_ASSIGN_OR_RETURN(double v, Number(body, f.key));
    s.*f.member = float(v);
  }
  if (Present(body, "logit_bias")) {
    const Json& bias = body["logit_bias"];
    if (!bias.is_object()) return Status::InvalidArgument("logit_bias must be an object of token id -> bias");
    for (const auto& [key, value] : bias.items()) {
      const std::optional<int32_t> id = LogitBiasTokenId(key);
      if (!id || !value.is_number()) return Status::InvalidArgument("logit_bias must map token ids (\"1234\") to numbers");
      s.logit_bias.emplace_back(*id, value.get<float>());
    }
  }
  if (Present(body, "top_k")) {
    KIMI_ASSIGN_OR_RETURN(int64_t k, Integer(body, "top_k"));
    // vLLM spells "no limit" as -1.
    if (k < -1 || k > INT32_MAX) return Status::InvalidArgument("top_k must be -1, 0 or a positive integer");
    s.top_k = k < 0 ? 0 : int32_t(k);
  }
  if (Present(body, "seed")) {
    KIMI_ASSIGN_OR_RETURN(int64_t seed, Integer(body, "seed"));
    s.seed = uint64_t(seed);
  }
  if (Present(body, "logprobs")) {
    // Chat completions say `logprobs: true`; /v1/completions say how many alternatives.
    const Json& logprobs = body["logprobs"];
    Result<int64_t> alternatives = logprobs.is_boolean() ? Result<int64_t>(int64_t{0}) : Integer(body, "logprobs");
    if (logprobs.is_boolean()) {
      if (logprobs.get<bool>()) s.top_logprobs = 0;
    } else if (alternatives.ok() && *alternatives >= 0 && *alternatives <= 5) {
      s.top_logprobs = int32_t(*alternatives);
    } else {
      return Status::InvalidArgument("logprobs must be a boolean, or an integer in [0, 5] for completions");
    }
  }
  if (Present(body, "top_logprobs")) {
    KIMI_ASSIGN_OR_RETURN(int64_t n, Integer(body, "top_logprobs"));
    if (s.top_logprobs < 0) return Status::InvalidArgument("top_logprobs needs logprobs: true");
    if (n < 0 || n > 20) return Status::InvalidArgument("top_logprobs must be in [0, 20]");
    s.top_logprobs = int32_t(n);
  }
  if (Present(body, "stop")) {
    KIMI_ASSIGN_OR_RETURN(p.stop, StopStrings(body["stop"]));
  }
  // Both are checked when both are sent; max_completion_tokens, read last, wins: it replaced
  // max_tokens.
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (!Present(body, key)) continue;
    KIMI_ASSIGN_OR_RETURN(int64_t n, Integer(body, key));
    if (n < 1) return Status::InvalidArgument(std::string(key) + " must be at least 1 (got " + std::to_string(n) + ")");
    p.max_tokens = n;
  }
  return p;
}

Status CheckEngineLimits(const GenerationParams& params) {
  KIMI_RETURN_IF_ERROR(params.sampling.Validate());
  if (params.stop.size() > kMaxStopStrings) {
    return Status::InvalidArgument("stop has " + std::to_string(params.stop.size()) + " strings; at most " +
                                   std::to_string(kMaxStopStrings) + " are allowed");
  }
  for (const std::string& s : params.stop) {
    if (s.size() > kMaxStopStringBytes) {
      return Status::InvalidArgument("stop strings must be at most " + std::to_string(kMaxStopStringBytes) + " bytes");
    }
  }
  return Status::OK();
}

Status ReadPromptFields(const Json& body, ServingRequest* request) {
  if (request->endpoint == ServingEndpoint::kCompletions) {
    KIMI_ASSIGN_OR_RETURN(request->prompt, CompletionPrompt(body));
    return Status::OK();
  }
  KIMI_ASSIGN_OR_RETURN(request->chat, ParseChatRequest(body));
  request->parallel_tool_calls = body.contains("parallel_tool_calls") && body["parallel_tool_calls"] == true;
  return Status::OK();
}

Result<ServingRequest> ReadServingRequest(const Json& body, ServingEndpoint endpoint) {
  // The generation fields first: their errors are what a bad body reported before the prompt's.
  KIMI_ASSIGN_OR_RETURN(GenerationParams generation, ReadGenerationParams(body));
  ServingRequest request;
  request.endpoint = endpoint;
  request.generation = std::move(generation);
  KIMI_RETURN_IF_ERROR(ReadPromptFields(body, &request));
  return request;
}

}  // namespace kimi
