#include "api/request_gate.h"

#include <atomic>

namespace kimi::api {
namespace {

using Json = nlohmann::ordered_json;

std::atomic<uint64_t> g_parses{0};

ServingEndpoint ServingEndpointOf(Endpoint endpoint) {
  return endpoint == Endpoint::kChatCompletions ? ServingEndpoint::kChatCompletions : ServingEndpoint::kCompletions;
}

// The model a body names, read before validation so that the right rules apply.
std::string NamedModel(const Json& body, const std::string& served) {
  if (body.is_object()) {
    if (auto it = body.find("model"); it != body.end() && it->is_string()) return it->get<std::string>();
  }
  return served;
}

}  // namespace

Result<ApiRequest> ParseRequest(Endpoint endpoint, const Json& body, const ModelRequestRules& rules) {
  g_parses.fetch_add(1, std::memory_order_relaxed);
  // The request rules (docs/api.md, "Request rules"); the body becomes their normalised form.
  ApiRequest request;
  KIMI_ASSIGN_OR_RETURN(request.validated, endpoint == Endpoint::kChatCompletions ? ValidateChatCompletion(body, rules)
                                                                                   : ValidateCompletion(body, rules));
  // The generation fields were read by the rules (kimi::ReadGenerationParams); the prompt's now.
  request.serving.endpoint = ServingEndpointOf(endpoint);
  request.serving.generation = request.validated.generation;
  KIMI_RETURN_IF_ERROR(ReadPromptFields(request.validated.body, &request.serving));
  return request;
}

Result<ApiRequest> ParseRequest(Endpoint endpoint, std::string_view body_text, const RulesLookup& rules,
                                const std::string& served) {
  const Json body = Json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    g_parses.fetch_add(1, std::memory_order_relaxed);
    return Status::InvalidArgument("the request body is not valid JSON");
  }
  if (rules == nullptr) return ParseRequest(endpoint, body);
  return ParseRequest(endpoint, body, rules(NamedModel(body, served)));
}

uint64_t RequestParses() { return g_parses.load(std::memory_order_relaxed); }

ResponseMode ReadResponseMode(const ApiRequest& request) {
  ResponseMode mode;
  mode.stream = request.validated.stream;
  mode.include_usage = request.validated.include_usage;
  // Chat's `logprobs: true` and completions' integer both ask for the chosen tokens' logprobs.
  mode.logprobs = request.serving.generation.sampling.top_logprobs >= 0;
  mode.thinking = request.validated.endpoint == Endpoint::kChatCompletions && request.serving.chat.thinking;
  return mode;
}

BackendRequest ToBackendRequest(ApiRequest request, std::string request_id, std::string model,
                                std::string workload_class, int priority,
                                std::shared_ptr<const EncodedRequestPrompt> prompt) {
  BackendRequest out;
  out.request_id = std::move(request_id);
  out.model = std::move(model);
  out.endpoint = request.validated.endpoint;
  out.serving = std::move(request.serving);
  out.validated_body = std::make_shared<const Json>(std::move(request.validated.body));
  out.workload_class = std::move(workload_class);
  out.priority = priority;
  out.encoded_prompt = std::move(prompt);
  return out;
}

std::string IgnoredFieldList(const ApiRequest& request) {
  std::string out;
  for (const std::string& field : request.validated.ignored_fields) out += (out.empty() ? "" : ", ") + field;
  return out;
}

}  // namespace kimi::api
