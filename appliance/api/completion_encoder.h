// The legacy /v1/completions responses, from the same StreamEvents as chat: answer text is
// the completion's text (reasoning and tool calls do not occur there; if a backend sends
// them they are left out). CompletionSseEncoder writes `text_completion` frames ending with
// one whose finish_reason and usage are set, an optional usage frame, then [DONE];
// TextCompletionBuilder folds the events into the whole response. With logprobs asked for,
// each text carries the legacy logprobs object (tokens, token_logprobs, top_logprobs,
// text_offset counted over the whole completion).
// Public header of api/: other folders include it.
// Thread safety: one thread at a time per object.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "api/response_meta.h"
#include "api/sse_frames.h"

namespace kimi::api {

class CompletionSseEncoder : public StreamEncoder {
 public:
  CompletionSseEncoder(ResponseMeta meta, bool include_usage, bool logprobs = false);
  void Encode(const StreamEvent& event, std::string* out) override;
  bool finished() const override { return finished_; }

 private:
  nlohmann::ordered_json Envelope() const;

  ResponseMeta meta_;
  bool include_usage_;
  bool logprobs_;
  int64_t text_offset_ = 0;  // bytes of completion text already sent
  bool finished_ = false;
};

class TextCompletionBuilder : public EventSink {
 public:
  explicit TextCompletionBuilder(bool logprobs = false) : logprobs_requested_(logprobs) {}
  bool Emit(const StreamEvent& event) override;
  bool finished() const { return finish_.has_value(); }
  const std::string& text() const { return text_; }
  nlohmann::ordered_json Build(const ResponseMeta& meta) const;

 private:
  std::string text_;
  std::optional<StreamEvent> finish_;
  bool logprobs_requested_;
  std::vector<TokenLogprobs> logprobs_;
};

}  // namespace kimi::api
