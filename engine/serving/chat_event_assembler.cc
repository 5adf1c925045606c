#include "serving/chat_event_assembler.h"

#include <algorithm>
#include <utility>

namespace kimi::serving {

ChatEventAssembler::ChatEventAssembler(std::unique_ptr<OutputParser> parser, std::function<bool(int32_t)> is_special,
                                       bool starts_in_reasoning, int64_t prompt_tokens)
    : parser_(std::move(parser)),
      is_special_(std::move(is_special)),
      in_reasoning_(starts_in_reasoning),
      prompt_tokens_(prompt_tokens) {}

void ChatEventAssembler::ReportLogprobs(std::function<std::string(int32_t)> token_bytes) {
  token_bytes_ = std::move(token_bytes);
}

TokenLogprobs ChatEventAssembler::Named(const SampledToken& sampled) const {
  TokenLogprobs t{token_bytes_(sampled.id), sampled.logprob, {}};
  for (const TokenLogprob& alt : sampled.top) t.top.push_back(TokenAlternative{token_bytes_(alt.id), alt.logprob});
  return t;
}

void ChatEventAssembler::OnToken(int32_t id, std::string_view text, std::deque<ChatEvent>* out,
                                 const SampledToken* sampled) {
  std::vector<OutputEvent> events;
  ++uncounted_tokens_;
  const bool special = is_special_(id);
  if (token_bytes_ && sampled != nullptr && !special) unplaced_logprobs_.push_back(Named(*sampled));
  if (parser_ == nullptr) {
    if (!text.empty()) events.push_back(OutputEvent{OutputEventKind::kAnswer, std::string(text), "", -1});
  } else {
    if (!text.empty()) parser_->Feed(GeneratedToken{-1, text}, &events);
    if (special) parser_->Feed(GeneratedToken{id, ""}, &events);
  }
  CountReasoning(events);
  // The thinking channel is plain text: the first special token after it (its <|close|>) is
  // its last token, and the markup that follows belongs to the answer.
  if (special) in_reasoning_ = false;
  Queue(events, out);
  // Ordinary tokens that produced nothing before a special token spelled its markup
  // ("<|open|>response<|sep|>"), not answer text.
  if (special) unplaced_logprobs_.clear();
}

void ChatEventAssembler::CountReasoning(const std::vector<OutputEvent>& events) {
  bool reasoning = events.empty() ? in_reasoning_ : false;
  for (const OutputEvent& e : events) {
    if (e.kind == OutputEventKind::kReasoning) reasoning = true;
    in_reasoning_ = e.kind == OutputEventKind::kReasoning;
  }
  if (reasoning) ++reasoning_tokens_;
}

void ChatEventAssembler::OnFinish(FinishReason reason, int64_t completion_tokens, std::deque<ChatEvent>* out) {
  if (reason == FinishReason::kCancelled) return;
  if (parser_ != nullptr) {
    std::vector<OutputEvent> events;
    parser_->Finish(&events);
    Queue(events, out);
  }
  unplaced_logprobs_.clear();  // text cut by a stop string: its tokens are not in the output
  ChatEvent e;
  e.kind = ChatEvent::Kind::kFinish;
  e.finish_reason = reason == FinishReason::kLength ? "length" : saw_tool_call_ ? "tool_calls" : "stop";
  e.usage.prompt_tokens = prompt_tokens_;
  e.usage.completion_tokens = completion_tokens;
  e.usage.reasoning_tokens = std::min(reasoning_tokens_, completion_tokens);
  e.tokens = std::exchange(uncounted_tokens_, 0);
  out->push_back(std::move(e));
}

void ChatEventAssembler::Queue(std::vector<OutputEvent>& events, std::deque<ChatEvent>* out) {
  ChatEvent* last_answer = nullptr;
  bool other_output = false;
  for (OutputEvent& o : events) {
    if (o.kind == OutputEventKind::kToolCallBegin) saw_tool_call_ = true;
    ChatEvent e;
    e.kind = ChatEvent::Kind::kOutput;
    e.output = std::move(o);
    e.tokens = std::exchange(uncounted_tokens_, 0);
    out->push_back(std::move(e));
    if (out->back().output.kind == OutputEventKind::kAnswer) {
      last_answer = &out->back();
    } else {
      other_output = true;
    }
  }
  if (last_answer != nullptr) {
    last_answer->logprobs = std::move(unplaced_logprobs_);
    unplaced_logprobs_.clear();
  } else if (other_output) {
    unplaced_logprobs_.clear();  // reasoning or tool-call tokens: no logprobs in the response
  }
}

}  // namespace kimi::serving
