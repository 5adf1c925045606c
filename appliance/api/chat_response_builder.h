// ChatResponseBuilder: folds one request's StreamEvents into the whole (non-streamed)
// `chat.completion` response: message.content, reasoning_content (when there was any),
// tool_calls [{id, type, function{name, arguments}}] in index order, finish_reason, usage,
// and logprobs.content (the answer's tokens) when the request asked for them.
// It reads the same events as ChatSseEncoder, so the two cannot disagree: the answer text,
// reasoning text and each call's arguments equal what the stream's frames join to.
// Public header of api/: other folders include it.
// Owns: the accumulated response. Thread safety: one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "api/response_meta.h"

namespace kimi::api {

struct BuiltToolCall {
  int index = -1;
  std::string id;
  std::string name;
  std::string arguments;
};

class ChatResponseBuilder : public EventSink {
 public:
  explicit ChatResponseBuilder(bool logprobs = false) : logprobs_requested_(logprobs) {}
  bool Emit(const StreamEvent& event) override;  // always true: a whole response has no client yet

  bool finished() const { return finish_.has_value(); }
  const std::string& answer() const { return answer_; }
  const std::string& reasoning() const { return reasoning_; }
  const std::vector<BuiltToolCall>& tool_calls() const { return tool_calls_; }

  // Precondition: finished().
  nlohmann::ordered_json Build(const ResponseMeta& meta) const;

 private:
  BuiltToolCall* Call(int index);

  std::string answer_;
  std::string reasoning_;
  std::vector<BuiltToolCall> tool_calls_;
  std::optional<StreamEvent> finish_;
  bool logprobs_requested_;
  std::vector<TokenLogprobs> logprobs_;
};

}  // namespace kimi::api
