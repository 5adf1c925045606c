// A request's prompt as the engine runs it: rendered once (RenderRequestPrompt: the K3 chat
// format for chat, the prompt text for completions), tokenised once (TokeniseRequestPrompt).
// A caller that needs the prompt before the request is submitted (the appliance's policy step
// checks the rendered text and counts its tokens) makes it here and hands it to
// ChatService::Start(), which renders and tokenises only what is still missing.
//
// Owns nothing. Thread safety: pure functions; an EncodedRequestPrompt is a plain value.
#pragma once

#include <cstdint>
#include <vector>

#include "kimi/chat_format.h"
#include "kimi/serving_request.h"
#include "kimi/status.h"
#include "kimi/tokenizer.h"

namespace kimi {

// The prompt of a request as the engine runs it: rendered, then tokenised.
struct EncodedRequestPrompt {
  RenderedPrompt rendered;   // chat: the K3 rendering; completions: the prompt text alone
  bool tokenised = false;    // ids and prompt_tokens are set
  std::vector<int32_t> ids;  // what the runtime runs (chat: with the generation stub)
  int64_t prompt_tokens = 0;  // what usage.prompt_tokens reports
  uint64_t tokenizer_id = 0;  // the tokenizer that made ids (Tokenizer::id)
};

// Renders the prompt of `request`. Errors: InvalidArgument naming the request field at fault.
Result<EncodedRequestPrompt> RenderRequestPrompt(const ServingRequest& request);
// Tokenises prompt->rendered with `tokenizer` unless it already holds that tokenizer's ids.
// Errors: the tokenizer's; InvalidArgument for an empty completions prompt.
Status TokeniseRequestPrompt(const Tokenizer& tokenizer, ServingEndpoint endpoint, EncodedRequestPrompt* prompt);

// The number of prompt tokens a request will report as usage.prompt_tokens, for checks made
// before it is submitted (the appliance's policy step). When the rendered prompt has at most
// `bound_enough` bytes it cannot have more tokens than bytes (every token covers at least one
// byte), so the byte count is returned as an upper bound (exact == false) without tokenising;
// otherwise *prompt is tokenised in place (TokeniseRequestPrompt), for Start() to run.
struct PromptTokenCount {
  int64_t tokens = 0;
  bool exact = true;  // false: `tokens` is an upper bound of at most bound_enough
};
Result<PromptTokenCount> CountPromptTokens(const Tokenizer& tokenizer, ServingEndpoint endpoint,
                                           EncodedRequestPrompt* prompt, int64_t bound_enough = -1);

}  // namespace kimi
