#include "api/request/request_validator.h"

#include <string_view>

#include "api/request/field_error.h"
#include "api/request/message_rules.h"
#include "api/request/response_format_rules.h"
#include "api/request/sampling_rules.h"
#include "api/request/thinking_rules.h"
#include "api/request/tool_rules.h"
#include "api/request/unapplied_options.h"
#include "kimi/python_text.h"

namespace kimi::api {
namespace {

using request::ExpectBool;
using request::ExpectInteger;
using request::ExpectObject;
using request::ExpectString;
using request::FieldError;
using request::In;
using request::Json;
using request::OptionalMember;

// top_k is read (and its type checked) by the one reader of the generation fields,
// kimi::ReadGenerationParams, when the request is converted (api/request_gate.cc).
constexpr std::string_view kSharedFields[] = {
    "model", "temperature", "top_p", "top_k", "n", "stream", "stream_options", "stop", "max_tokens",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "user", "seed"};
constexpr std::string_view kChatFields[] = {
    "messages", "max_completion_tokens", "top_logprobs", "tools", "tool_choice", "parallel_tool_calls",
    "response_format", "thinking", "reasoning_effort", "thinking_effort", "preserve_thinking",
    "chat_template_kwargs", "add_generation_prompt", "metadata", "store", "service_tier"};
constexpr std::string_view kCompletionFields[] = {"prompt", "echo", "suffix", "best_of"};

Status CheckBodyObject(const Json& body) {
  if (!body.is_object()) return FieldError("body", "must be a JSON object");
  // The rule modules recurse into schemas and content; bound the depth before they do.
  for (const auto& [key, value] : body.items()) {
    if (!chat::NestingWithin(value, chat::kMaxNesting)) {
      return FieldError(key, "is nested deeper than " + std::to_string(chat::kMaxNesting) + " levels");
    }
  }
  return Status::OK();
}

// metadata: OpenAI's bounds, at most 16 pairs of a key of at most 64 bytes and a string
// value of at most 512 bytes.
Status CheckMetadata(const Json& metadata) {
  constexpr size_t kMaxPairs = 16, kMaxKey = 64, kMaxValue = 512;
  KIMI_RETURN_IF_ERROR(ExpectObject(metadata, "metadata"));
  if (metadata.size() > kMaxPairs) {
    return FieldError("metadata", "must have at most " + std::to_string(kMaxPairs) + " pairs (got " +
                                      std::to_string(metadata.size()) + ")");
  }
  // Keys are the caller's text (spaces included): errors name the field, not the key.
  for (const auto& [key, value] : metadata.items()) {
    if (key.size() > kMaxKey) return FieldError("metadata", "keys must be at most " + std::to_string(kMaxKey) + " bytes");
    if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxValue) {
      return FieldError("metadata", "values must be strings of at most " + std::to_string(kMaxValue) + " bytes");
    }
  }
  return Status::OK();
}

// Fields the server accepts without acting on them still must have OpenAI's types.
Status CheckPassiveFields(const Json& body, bool chat) {
  if (const Json* v = OptionalMember(body, "user")) KIMI_RETURN_IF_ERROR(ExpectString(*v, "user"));
  if (const Json* v = OptionalMember(body, "logprobs")) {
    if (chat) {
      KIMI_RETURN_IF_ERROR(ExpectBool(*v, "logprobs"));
    } else {
      int64_t n = 0;
      KIMI_RETURN_IF_ERROR(ExpectInteger(*v, "logprobs", &n));
      if (n < 0 || n > 5) return FieldError("logprobs", "must be in [0, 5]");
    }
  }
  if (!chat) return Status::OK();
  // top_logprobs is the one reader's (kimi::ReadGenerationParams).
  for (const char* key : {"parallel_tool_calls", "add_generation_prompt", "store"}) {
    if (const Json* v = OptionalMember(body, key)) KIMI_RETURN_IF_ERROR(ExpectBool(*v, key));
  }
  if (const Json* v = OptionalMember(body, "metadata")) KIMI_RETURN_IF_ERROR(CheckMetadata(*v));
  return Status::OK();
}

// The generation fields through the one reader the engine's worker uses too, so that their
// OpenAI rules (types, stop strings, caps, top_logprobs) live once; after the model's bounds.
Status ReadGeneration(const Json& body, ValidatedRequest* out) {
  KIMI_ASSIGN_OR_RETURN(out->generation, ReadGenerationParams(body));
  return Status::OK();
}

void ListIgnoredFields(const Json& body, bool chat, ValidatedRequest* out) {
  for (const auto& [key, value] : body.items()) {
    if (In(kSharedFields, key) || (chat ? In(kChatFields, key) : In(kCompletionFields, key))) continue;
    out->ignored_fields.push_back(key);
  }
}

Status CheckPrompt(const Json& body, ValidatedRequest* out) {
  const Json* prompt = OptionalMember(body, "prompt");
  if (prompt == nullptr) return FieldError("prompt", "is required");
  if (prompt->is_array()) {
    if (prompt->size() != 1) return FieldError("prompt", "must be a string or an array of exactly one string");
    prompt = &(*prompt)[0];
    KIMI_RETURN_IF_ERROR(ExpectString(*prompt, "prompt[0]"));
  } else if (!prompt->is_string()) {
    return FieldError("prompt", "must be a string or an array of exactly one string");
  }
  out->prompt = prompt->get<std::string>();
  return Status::OK();
}

Status CheckCompletionOnlyFields(const Json& body, const ModelRequestRules& rules) {
  if (const Json* v = OptionalMember(body, "echo")) KIMI_RETURN_IF_ERROR(ExpectBool(*v, "echo"));
  if (const Json* v = OptionalMember(body, "suffix")) KIMI_RETURN_IF_ERROR(ExpectString(*v, "suffix"));
  if (const Json* v = OptionalMember(body, "best_of")) {
    int64_t best_of = 0;
    KIMI_RETURN_IF_ERROR(ExpectInteger(*v, "best_of", &best_of));
    const int64_t n = rules.n.value_or(1);
    if (best_of != n) return FieldError("best_of", "must equal n (" + std::to_string(n) + ") for this model");
  }
  return Status::OK();
}

}  // namespace

Result<ValidatedRequest> ValidateChatCompletion(const Json& sent, const ModelRequestRules& rules) {
  KIMI_RETURN_IF_ERROR(CheckBodyObject(sent));
  ValidatedRequest out;
  out.endpoint = Endpoint::kChatCompletions;
  // The rules read the body with developer messages as the system messages they are rendered,
  // scanned and forwarded as.
  out.body = sent;
  request::WriteSystemRoles(&out.body);
  const Json& body = out.body;

  // Pass 1: each field and each message on its own, dynamic tool lists included.
  KIMI_RETURN_IF_ERROR(request::CheckSamplingFields(body, rules, &out));
  KIMI_RETURN_IF_ERROR(request::CheckMessages(body));
  if (const Json* tools = OptionalMember(body, "tools")) KIMI_RETURN_IF_ERROR(request::CheckToolListShape(*tools, "tools"));
  KIMI_RETURN_IF_ERROR(request::CheckToolChoiceValue(body));
  KIMI_RETURN_IF_ERROR(request::CheckResponseFormat(body, &out));
  KIMI_RETURN_IF_ERROR(request::ResolveThinking(body, &out));
  KIMI_RETURN_IF_ERROR(CheckPassiveFields(body, /*chat=*/true));
  KIMI_RETURN_IF_ERROR(request::CheckUnappliedOptions(body, /*chat=*/true));

  // Pass 2: rules across the request (tool names, tool_choice against the tools).
  KIMI_RETURN_IF_ERROR(request::ResolveTools(body, &out));

  KIMI_RETURN_IF_ERROR(ReadGeneration(body, &out));
  ListIgnoredFields(body, /*chat=*/true, &out);
  request::WriteThinking(out, &out.body);
  return out;
}

Result<ValidatedRequest> ValidateCompletion(const Json& body, const ModelRequestRules& rules) {
  KIMI_RETURN_IF_ERROR(CheckBodyObject(body));
  ValidatedRequest out;
  out.endpoint = Endpoint::kCompletions;
  KIMI_RETURN_IF_ERROR(request::CheckSamplingFields(body, rules, &out));
  KIMI_RETURN_IF_ERROR(CheckPrompt(body, &out));
  KIMI_RETURN_IF_ERROR(CheckCompletionOnlyFields(body, rules));
  KIMI_RETURN_IF_ERROR(CheckPassiveFields(body, /*chat=*/false));
  KIMI_RETURN_IF_ERROR(request::CheckUnappliedOptions(body, /*chat=*/false));
  KIMI_RETURN_IF_ERROR(ReadGeneration(body, &out));
  ListIgnoredFields(body, /*chat=*/false, &out);
  out.body = body;
  out.body["prompt"] = out.prompt;
  return out;
}

std::optional<std::string> RequestErrorParam(const Status& status) {
  std::optional<std::string> field = request::FieldOfRuleError(status);
  if (!field) return std::nullopt;
  // Only a path that starts at a request field: other handlers' messages start with words.
  const std::string_view root = std::string_view(*field).substr(0, field->find_first_of(".["));
  if (In(kSharedFields, root) || In(kChatFields, root) || In(kCompletionFields, root)) return field;
  return std::nullopt;
}

}  // namespace kimi::api
