// ChatSseEncoder: turns one request's StreamEvents into the Server-Sent Events of a
// streamed chat completion (`chat.completion.chunk` frames), applying every streaming rule of
// the API once, whatever the backend delivered (docs/api.md, "Streaming"):
//   - keys whose value would be null are left out; id, object, created and model are the
//     same in every frame;
//   - the first frame is delta {"role":"assistant","content":""}; role never appears again;
//   - one frame carries one of content, reasoning_content or tool_calls;
//   - with thinking on, {"reasoning_content":""} follows the last reasoning frame, before any
//     answer, tool call or the end;
//   - a tool call opens with index, id, type, function.name and arguments ""; then frames of
//     index and function.arguments only, each at most `argument_chunk_bytes` bytes (cut on
//     character boundaries), however the backend delivered the arguments;
//   - with logprobs asked for, an answer frame's choice carries logprobs.content for the
//     tokens of its text;
//   - the end frame has delta {}, finish_reason and usage (in choices[0].usage); with
//     include_usage one more frame with choices [] and usage; then "data: [DONE]".
// Public header of api/: other folders include it.
// Owns: the state of one response. Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "api/backend.h"
#include "api/response_meta.h"
#include "api/sse_frames.h"

namespace kimi::api {

struct ChatStreamOptions {
  bool thinking = true;        // the request's thinking mode: decides the boundary frame
  bool include_usage = false;  // stream_options.include_usage
  size_t argument_chunk_bytes = 64;  // >= 1
  bool logprobs = false;       // the request asked for logprobs
};

class ChatSseEncoder : public StreamEncoder {
 public:
  ChatSseEncoder(ResponseMeta meta, ChatStreamOptions options);

  // Appends the frames `event` produces ("data: {...}\n\n" each) to *out. After kFinish the
  // stream is complete (the [DONE] line included) and further events are ignored.
  void Encode(const StreamEvent& event, std::string* out) override;
  bool finished() const override { return finished_; }

 private:
  void Frame(nlohmann::ordered_json delta, std::string* out, const std::vector<TokenLogprobs>* logprobs = nullptr);
  // The frame of a delta with one text field (content or reasoning_content), written
  // straight into *out: the same bytes as Frame(), without building a JSON tree per token.
  void TextFrame(std::string_view key, std::string_view value, std::string* out);
  void EndReasoning(std::string* out);
  void Finish(const StreamEvent& event, std::string* out);
  nlohmann::ordered_json Envelope() const;

  ResponseMeta meta_;
  ChatStreamOptions options_;
  std::string escaped_;       // TextFrame's scratch, kept to spare an allocation per frame
  std::string frame_prefix_;  // "data: {" + the envelope's members (id, object, created, model)
  bool started_ = false;
  bool in_reasoning_ = false;
  bool finished_ = false;
};

}  // namespace kimi::api
