#include "api/completion_encoder.h"

#include "api/sse_frames.h"
#include "kimi/logprobs_json.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

CompletionSseEncoder::CompletionSseEncoder(ResponseMeta meta, bool include_usage, bool logprobs)
    : meta_(std::move(meta)), include_usage_(include_usage), logprobs_(logprobs) {}

Json CompletionSseEncoder::Envelope() const {
  return {{"id", meta_.id}, {"object", "text_completion"}, {"created", meta_.created}, {"model", meta_.model}};
}

void CompletionSseEncoder::Encode(const StreamEvent& event, std::string* out) {
  if (finished_) return;
  if (event.kind == StreamEventKind::kAnswer && !event.text.empty()) {
    Json frame = Envelope();
    Json choice{{"index", 0}, {"text", event.text}};
    if (logprobs_) choice["logprobs"] = chat::CompletionLogprobs(event.logprobs, text_offset_);
    text_offset_ += int64_t(event.text.size());
    frame["choices"] = Json::array({std::move(choice)});
    *out += SseFrame(frame);
    return;
  }
  if (event.kind != StreamEventKind::kFinish) return;
  AppendStreamEnd(Envelope(), Json{{"index", 0}, {"text", ""}, {"finish_reason", event.finish_reason}}, event.usage,
                  include_usage_, out);
  finished_ = true;
}

bool TextCompletionBuilder::Emit(const StreamEvent& event) {
  if (event.kind == StreamEventKind::kAnswer) {
    text_ += event.text;
    logprobs_.insert(logprobs_.end(), event.logprobs.begin(), event.logprobs.end());
  }
  if (event.kind == StreamEventKind::kFinish) finish_ = event;
  return true;
}

Json TextCompletionBuilder::Build(const ResponseMeta& meta) const {
  Json choice{{"index", 0}, {"text", text_}};
  if (logprobs_requested_) choice["logprobs"] = chat::CompletionLogprobs(logprobs_, 0);
  choice["finish_reason"] = finish_ ? finish_->finish_reason : "stop";
  return Json{{"id", meta.id},
              {"object", "text_completion"},
              {"created", meta.created},
              {"model", meta.model},
              {"choices", Json::array({std::move(choice)})},
              {"usage", UsageJson(finish_ ? finish_->usage : TokenUsage{})}};
}

}  // namespace kimi::api
