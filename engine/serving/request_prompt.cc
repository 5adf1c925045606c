// A request's prompt rendered and tokenised once (kimi/request_prompt.h).
#include "kimi/request_prompt.h"

#include "chat/prompt_work_count.h"
#include "kimi/prompt_encoding.h"

namespace kimi {

Result<EncodedRequestPrompt> RenderRequestPrompt(const ServingRequest& request) {
  EncodedRequestPrompt out;
  if (request.endpoint == ServingEndpoint::kChatCompletions) {
    KIMI_ASSIGN_OR_RETURN(out.rendered, ChatFormat::Render(request.chat));
  } else {
    out.rendered.text = request.prompt;
  }
  return out;
}

Status TokeniseRequestPrompt(const Tokenizer& tokenizer, ServingEndpoint endpoint, EncodedRequestPrompt* prompt) {
  if (prompt->tokenised && prompt->tokenizer_id == tokenizer.id()) return Status::OK();
  chat::CountPromptTokenization();
  if (endpoint == ServingEndpoint::kChatCompletions) {
    KIMI_ASSIGN_OR_RETURN(PromptIds encoded, EncodePrompt(tokenizer, prompt->rendered));
    prompt->ids = std::move(encoded.ids);
    prompt->prompt_tokens = int64_t(encoded.prompt_tokens);
  } else {
    KIMI_ASSIGN_OR_RETURN(prompt->ids, tokenizer.Encode(prompt->rendered.text, /*allow_special=*/false));
    if (prompt->ids.empty()) return Status::InvalidArgument("prompt must not be empty");
    prompt->prompt_tokens = int64_t(prompt->ids.size());
  }
  prompt->tokenised = true;
  prompt->tokenizer_id = tokenizer.id();
  return Status::OK();
}

Result<PromptTokenCount> CountPromptTokens(const Tokenizer& tokenizer, ServingEndpoint endpoint,
                                           EncodedRequestPrompt* prompt, int64_t bound_enough) {
  const bool ready = prompt->tokenised && prompt->tokenizer_id == tokenizer.id();
  // The bytes the counted tokens cover: the rendered prompt without its generation stub.
  const auto bytes = int64_t(prompt->rendered.text_without_stub().size());
  if (!ready && bound_enough >= 0 && bytes <= bound_enough) return PromptTokenCount{bytes, false};
  KIMI_RETURN_IF_ERROR(TokeniseRequestPrompt(tokenizer, endpoint, prompt));
  return PromptTokenCount{prompt->prompt_tokens, true};
}

}  // namespace kimi
