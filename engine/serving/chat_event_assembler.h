// ChatEventAssembler: turns one request's runtime output (sampled token ids with the text they
// released, then the finish) into ChatEvents: the output parser's reasoning / answer /
// tool-call events, then the finish with its reason and usage. Kept apart from the runtime so
// it can be driven token by token in tests.
//
// - The runtime's text is whole characters of ordinary tokens, sometimes released late (held
//   back for a stop string) on a special token: the text is fed first, then the special id.
// - finish_reason: "length" when max_tokens ran out; else "tool_calls" when the output held a
//   tool call; else "stop". A cancelled request ends with no finish event.
// - reasoning_tokens: tokens that produced reasoning text, or produced nothing while the
//   output was still in the thinking channel (held-back bytes), up to and including the
//   special token that closes it.
// - logprobs (when the request asked for them): each ordinary token's entry rides on the answer
//   event its text ends up in (text held back for a stop string waits with its tokens).
//   Tokens of reasoning, of tool calls and special tokens have none, as in OpenAI's API.
// - ChatEvent::tokens: every token fed is counted once, on the first event queued after it
//   (the finish event takes the tokens that released no output), so that inter-token gaps
//   can be measured per token, not per event.
//
// Owns: the parser. Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string_view>

#include "kimi/chat_service.h"

namespace kimi::serving {

class ChatEventAssembler {
 public:
  // parser null: /v1/completions, every text is answer text.
  ChatEventAssembler(std::unique_ptr<OutputParser> parser, std::function<bool(int32_t)> is_special,
                     bool starts_in_reasoning, int64_t prompt_tokens);

  // Reports logprobs from now on; `token_bytes` names a token id by its bytes.
  void ReportLogprobs(std::function<std::string(int32_t)> token_bytes);

  // `sampled` (may be null) carries the token's logprobs when the runtime took them.
  void OnToken(int32_t id, std::string_view text, std::deque<ChatEvent>* out, const SampledToken* sampled = nullptr);
  void OnFinish(FinishReason reason, int64_t completion_tokens, std::deque<ChatEvent>* out);

 private:
  void CountReasoning(const std::vector<OutputEvent>& events);
  void Queue(std::vector<OutputEvent>& events, std::deque<ChatEvent>* out);
  TokenLogprobs Named(const SampledToken& sampled) const;

  std::unique_ptr<OutputParser> parser_;
  std::function<bool(int32_t)> is_special_;
  bool in_reasoning_;
  int64_t prompt_tokens_;
  int64_t reasoning_tokens_ = 0;
  bool saw_tool_call_ = false;
  int64_t uncounted_tokens_ = 0;  // fed since the last event queued
  std::function<std::string(int32_t)> token_bytes_;  // null: no logprobs
  std::vector<TokenLogprobs> unplaced_logprobs_;     // tokens whose text is not out yet
};

}  // namespace kimi::serving
