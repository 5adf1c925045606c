#include "api/chat_sse_encoder.h"

#include <algorithm>

#include "kimi/logprobs_json.h"
#include "kimi/python_text.h"
#include "kimi/tokenizer_utf8.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

ChatSseEncoder::ChatSseEncoder(ResponseMeta meta, ChatStreamOptions options)
    : meta_(std::move(meta)), options_(options) {
  options_.argument_chunk_bytes = std::max<size_t>(1, options_.argument_chunk_bytes);
  // The envelope is the same in every frame: serialised once, its closing brace left off.
  const std::string envelope = DumpJson(Envelope());
  frame_prefix_ = "data: " + envelope.substr(0, envelope.size() - 1);
}

Json ChatSseEncoder::Envelope() const {
  return {{"id", meta_.id}, {"object", "chat.completion.chunk"}, {"created", meta_.created}, {"model", meta_.model}};
}

void ChatSseEncoder::Frame(Json delta, std::string* out, const std::vector<TokenLogprobs>* logprobs) {
  Json frame = Envelope();
  Json choice{{"index", 0}, {"delta", std::move(delta)}};
  if (logprobs != nullptr && options_.logprobs && !logprobs->empty()) {
    choice["logprobs"] = Json{{"content", chat::ChatLogprobsContent(*logprobs)}};
  }
  frame["choices"] = Json::array({std::move(choice)});
  *out += SseFrame(frame);
}

void ChatSseEncoder::TextFrame(std::string_view key, std::string_view value, std::string* out) {
  // DumpJson() drops bytes that are not UTF-8; such text (never from a conforming backend)
  // takes the general path so that the bytes stay exactly DumpJson()'s.
  if (!text::ValidateUtf8(value).ok()) {
    Frame(Json{{std::string(key), std::string(value)}}, out);
    return;
  }
  out->append(frame_prefix_);
  out->append(",\"choices\":[{\"index\":0,\"delta\":{\"");
  out->append(key);
  out->append("\":\"");
  escaped_.clear();
  chat::AppendJsonEscaped(value, &escaped_);  // the escaping DumpJson() applies with ensure_ascii off
  AppendEscapingSseLineBreaks(escaped_, out);  // and the one SseFrame() adds
  out->append("\"}}]}\n\n");
}

void ChatSseEncoder::EndReasoning(std::string* out) {
  if (!in_reasoning_) return;
  in_reasoning_ = false;
  if (options_.thinking) Frame(Json{{"reasoning_content", ""}}, out);
}

void ChatSseEncoder::Encode(const StreamEvent& event, std::string* out) {
  if (finished_) return;
  if (!started_) {
    started_ = true;
    Frame(Json{{"role", "assistant"}, {"content", ""}}, out);
  }
  switch (event.kind) {
    case StreamEventKind::kReasoning:
      if (event.text.empty()) return;
      in_reasoning_ = true;
      TextFrame("reasoning_content", event.text, out);
      return;
    case StreamEventKind::kAnswer:
      if (event.text.empty()) return;
      EndReasoning(out);
      if (options_.logprobs && !event.logprobs.empty()) Frame(Json{{"content", event.text}}, out, &event.logprobs);
      else TextFrame("content", event.text, out);
      return;
    case StreamEventKind::kToolCallBegin: {
      EndReasoning(out);
      const std::string id = event.tool_call_id.empty() ? ToolCallId(event.tool_name, event.tool_index) : event.tool_call_id;
      Json call{{"index", event.tool_index},
                {"id", id},
                {"type", "function"},
                {"function", Json{{"name", event.tool_name}, {"arguments", ""}}}};
      Frame(Json{{"tool_calls", Json::array({std::move(call)})}}, out);
      return;
    }
    case StreamEventKind::kToolCallArguments: {
      std::string_view rest = event.text;
      while (!rest.empty()) {
        const size_t n = Utf8PrefixLength(rest, options_.argument_chunk_bytes);
        Json call{{"index", event.tool_index}, {"function", Json{{"arguments", std::string(rest.substr(0, n))}}}};
        Frame(Json{{"tool_calls", Json::array({std::move(call)})}}, out);
        rest.remove_prefix(n);
      }
      return;
    }
    case StreamEventKind::kToolCallEnd:
      return;
    case StreamEventKind::kFinish:
      Finish(event, out);
      return;
  }
}

void ChatSseEncoder::Finish(const StreamEvent& event, std::string* out) {
  EndReasoning(out);
  AppendStreamEnd(Envelope(), Json{{"index", 0}, {"delta", Json::object()}, {"finish_reason", event.finish_reason}},
                  event.usage, options_.include_usage, out);
  finished_ = true;
}

}  // namespace kimi::api
