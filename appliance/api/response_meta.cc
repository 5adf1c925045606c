#include "api/response_meta.h"

#include <ctime>

#include "kimi/tokenizer_utf8.h"

namespace kimi::api {

ResponseMeta NewResponseMeta(Endpoint endpoint, std::string_view request_id, std::string_view model) {
  ResponseMeta meta;
  meta.id = std::string(endpoint == Endpoint::kChatCompletions ? "chatcmpl-" : "cmpl-") + std::string(request_id);
  meta.created = static_cast<int64_t>(std::time(nullptr));
  meta.model = std::string(model);
  return meta;
}

nlohmann::ordered_json UsageJson(const TokenUsage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"completion_tokens_details", {{"reasoning_tokens", usage.reasoning_tokens}}}};
}

std::string ToolCallId(std::string_view name, int index) {
  return "functions." + std::string(name) + ":" + std::to_string(index);
}

std::string DumpJson(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::ignore);
}

size_t Utf8PrefixLength(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  size_t cut = max_bytes;
  while (cut > 0 && kimi::text::IsUtf8Continuation(text[cut])) --cut;
  if (cut > 0) return cut;
  // The first character alone is longer than max_bytes: send it whole.
  cut = 1;
  while (cut < text.size() && kimi::text::IsUtf8Continuation(text[cut])) ++cut;
  return cut;
}

}  // namespace kimi::api
