#include "api/request/unapplied_options.h"

#include <string_view>

namespace kimi::api::request {
namespace {

enum class Neutral { kNull, kFalse, kTrue, kZero, kOne, kEmptyArray };

struct UnappliedOption {
  std::string_view name;
  Neutral neutral;  // besides null, which is always neutral
  std::string_view instead;
};

constexpr std::string_view kUseResponseFormat = "use response_format (json_schema or json_object) or a strict tool";

constexpr UnappliedOption kUnappliedOptions[] = {
    {"guided_json", Neutral::kNull, kUseResponseFormat},
    {"guided_regex", Neutral::kNull, kUseResponseFormat},
    {"guided_choice", Neutral::kNull, kUseResponseFormat},
    {"guided_grammar", Neutral::kNull, kUseResponseFormat},
    {"guided_decoding_backend", Neutral::kNull, kUseResponseFormat},
    {"guided_whitespace_pattern", Neutral::kNull, kUseResponseFormat},
    {"structured_outputs", Neutral::kNull, kUseResponseFormat},
    {"structural_tag", Neutral::kNull, kUseResponseFormat},
    {"stop_token_ids", Neutral::kEmptyArray, "use stop"},
    {"bad_words", Neutral::kEmptyArray, "use logit_bias"},
    {"allowed_token_ids", Neutral::kNull, "use logit_bias"},
    {"logits_processors", Neutral::kNull, ""},
    {"min_p", Neutral::kZero, ""},
    {"repetition_penalty", Neutral::kOne, "use presence_penalty or frequency_penalty where the model allows them"},
    {"length_penalty", Neutral::kOne, ""},
    {"use_beam_search", Neutral::kFalse, ""},
    {"min_tokens", Neutral::kZero, ""},
    {"ignore_eos", Neutral::kFalse, ""},
    {"include_stop_str_in_output", Neutral::kFalse, ""},
    {"skip_special_tokens", Neutral::kTrue, ""},
    {"spaces_between_special_tokens", Neutral::kTrue, ""},
    {"truncate_prompt_tokens", Neutral::kNull, ""},
    {"prompt_logprobs", Neutral::kNull, ""},
    {"return_tokens_as_token_ids", Neutral::kFalse, ""},
    {"continue_final_message", Neutral::kFalse, ""},
    {"documents", Neutral::kNull, ""},
    {"chat_template", Neutral::kNull, "the model's own chat format is always used"},
    {"mm_processor_kwargs", Neutral::kNull, ""},
};

bool IsNeutral(const Json& value, Neutral neutral) {
  if (value.is_null()) return true;
  switch (neutral) {
    case Neutral::kNull: return false;
    case Neutral::kFalse: return value.is_boolean() && !value.get<bool>();
    case Neutral::kTrue: return value.is_boolean() && value.get<bool>();
    case Neutral::kZero: return value.is_number() && value.get<double>() == 0.0;
    case Neutral::kOne: return value.is_number() && value.get<double>() == 1.0;
    case Neutral::kEmptyArray: return value.is_array() && value.empty();
  }
  return false;
}

Status Refusal(std::string_view field, std::string_view instead) {
  std::string problem = "is an option of other servers (vLLM) that this server does not apply; the answer would not "
                        "follow it";
  if (!instead.empty()) problem += std::string(": ") + std::string(instead);
  return FieldError(field, problem);
}

}  // namespace

Status CheckUnappliedOptions(const Json& body, bool chat) {
  for (const UnappliedOption& option : kUnappliedOptions) {
    auto value = body.find(option.name);
    if (value != body.end() && !IsNeutral(*value, option.neutral)) return Refusal(option.name, option.instead);
  }
  // Completions echo the prompt; a chat completion has no such option.
  if (auto echo = body.find("echo"); chat && echo != body.end() && !IsNeutral(*echo, Neutral::kFalse)) {
    return Refusal("echo", "");
  }
  return Status::OK();
}

}  // namespace kimi::api::request
