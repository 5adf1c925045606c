// ChunkNormalizer: turns the chunks of an OpenAI-compatible chat-completions stream, in the
// dialects that `kimi-engine serve` and vLLM speak, into the appliance's StreamEvents
// (api/backend.h), so that the encoders never see an upstream's quirks.
//
// What it accepts in `choices[0].delta` (or `choices[0].message`, for an upstream that
// answered with one whole chat.completion object):
//   - reasoning text as `reasoning_content` or as vLLM's `reasoning` (when both carry the same
//     text, as some vLLM versions send, it is emitted once) -> kReasoning;
//   - `content` -> kAnswer; a delta carrying reasoning and content yields reasoning first;
//   - `tool_calls`, streamed in pieces or each call whole: a call begins at the first piece
//     with a new `index` (or, without an index, a new name) and ends when the next call
//     begins, text arrives, or the stream finishes. Upstream indices are renumbered from 0.
//     Pieces of a call that already ended (interleaved calls) are an error.
//   - `choices[0].text` of a /v1/completions stream -> kAnswer;
//   - `logprobs` (chat `content[]` or the legacy completions object) -> the logprobs of the
//     answer event the same choice carried;
//   - `finish_reason` and `usage` (also in the usage-only chunk with `choices: []`);
//   - an in-stream `{"error": {...}}` object becomes a Status.
// Finish() closes the call left open and appends kFinish; a stream that never said
// finish_reason is an error, not a silent "stop".
//
// Owns: the per-stream state (open call, index map, finish reason, usage).
// Thread safety: one instance per stream, used from one thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "kimi/status.h"

namespace kimi::upstream {

class ChunkNormalizer {
 public:
  // Appends the events one parsed chunk carries to *events.
  Status Consume(const nlohmann::json& chunk, std::vector<api::StreamEvent>* events);
  // The same for a chunk's JSON text (one SSE event's data). The common text delta is read
  // without building a JSON tree (plain_chunk.h); any other chunk is parsed and Consume()d.
  Status ConsumeText(std::string_view data, std::vector<api::StreamEvent>* events);
  // The stream ended normally: appends the end of an open call and kFinish.
  Status Finish(std::vector<api::StreamEvent>* events);
  // The appliance ended the stream at the request's max_tokens, which the upstream did not
  // keep: appends the end of an open call and kFinish "length" counting `completion_tokens`.
  void FinishAtLength(int64_t completion_tokens, std::vector<api::StreamEvent>* events);

  bool finished() const { return !finish_reason_.empty(); }

 private:
  Status ConsumeDelta(const nlohmann::json& delta, std::vector<api::StreamEvent>* events);
  Status ContentAfterFinish(const nlohmann::json& choice);
  // The text of a delta: reasoning (reasoning_content, else vLLM's reasoning) before content.
  void ConsumeDeltaText(std::string reasoning_content, std::string reasoning, std::string content,
                        std::vector<api::StreamEvent>* events);
  Status AttachLogprobs(const nlohmann::json& choice, size_t first_new, std::vector<api::StreamEvent>* events);
  Status ConsumeToolCall(const nlohmann::json& call, size_t position, std::vector<api::StreamEvent>* events);
  void CloseOpenCall(std::vector<api::StreamEvent>* events);

  std::map<long long, int> call_index_;  // upstream key -> our index
  std::map<long long, std::string> call_ids_;  // upstream key -> the id the upstream gave
  long long open_key_ = 0;
  bool call_open_ = false;
  int calls_begun_ = 0;
  long long synthetic_keys_ = 0;  // keys for calls sent without an index
  std::string finish_reason_;
  api::TokenUsage usage_;
};

// The Status an OpenAI-shaped error object (`{"error": {...}}`, or vLLM's flat
// `{"object": "error", "message", "code"}`) stands for; `http_status` is the response's status,
// 0 when the error came inside a stream. 400, 413 and 422 (the request's content) ->
// InvalidArgument with the upstream's message; 429 -> ResourceExhausted; any other 4xx (the
// appliance's credential or configuration: 401, 403, 404, ...) -> BadGateway without the
// upstream's message, which is logged; 5xx and an error inside a stream -> Unavailable.
Status UpstreamErrorStatus(const nlohmann::json& error_body, int http_status, const std::string& upstream_name);

}  // namespace kimi::upstream
