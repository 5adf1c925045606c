// The wire format of `kimi-engine serve`: ChatService events written the way vLLM's
// OpenAI-compatible server writes them, so that the appliance's upstream adapter (and any
// OpenAI client) reads a worker and a vLLM server alike.
//
// Streaming: "data: <chat.completion.chunk>\n\n" frames. The first carries
// delta {"role": "assistant", "content": ""}; reasoning goes out as vLLM's `delta.reasoning`,
// answer text as `delta.content`; a tool call's first frame carries index, id, type and
// function {name, arguments: ""}, later frames index and function.arguments; the finish
// frame has an empty delta and finish_reason; with stream_options.include_usage one more
// frame with `choices: []` and usage; then "data: [DONE]". Not streaming: one chat.completion
// with message {role, content, reasoning, tool_calls} and usage. /v1/completions writes
// "text_completion" objects whose choices carry `text` (no role frame, no reasoning).
// Errors: vLLM's {"object": "error", "message", "type", "param", "code"}.
//
// Thread safety: a writer or builder belongs to one request.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "kimi/chat_service.h"
#include "kimi/status.h"

namespace kimi::tools {

struct ResponseIdentity {
  std::string id;       // "chatcmpl-<hex>", "cmpl-<hex>" for completions
  int64_t created = 0;  // Unix seconds
  std::string model;
  ServingEndpoint endpoint = ServingEndpoint::kChatCompletions;
};

// A fresh identity: a random id and the current time.
ResponseIdentity NewResponseIdentity(const std::string& model,
                                     ServingEndpoint endpoint = ServingEndpoint::kChatCompletions);

class ChunkWriter {
 public:
  ChunkWriter(ResponseIdentity identity, bool include_usage);
  std::string RoleFrame();  // "" for completions
  // The frame for one output event (with the logprobs of its tokens, when asked for); "" for
  // events that have none (the end of a tool call).
  std::string OutputFrame(const ChatEvent& event);
  // The finish frame, the usage frame when asked for, and [DONE].
  std::string FinishFrames(const ChatEvent& finish);

 private:
  std::string Frame(const nlohmann::ordered_json& delta, const nlohmann::ordered_json& finish_reason,
                    const std::vector<TokenLogprobs>& logprobs = {});

  ResponseIdentity identity_;
  bool include_usage_;
  int64_t text_offset_ = 0;  // completion text sent so far, for the legacy logprobs offsets
  std::map<int, std::string> call_ids_;
};

class ResponseBuilder {
 public:
  explicit ResponseBuilder(ResponseIdentity identity) : identity_(std::move(identity)) {}
  void Add(const ChatEvent& event);
  nlohmann::ordered_json Build() const;

 private:
  ResponseIdentity identity_;
  std::string reasoning_;
  std::string content_;
  nlohmann::ordered_json tool_calls_ = nlohmann::ordered_json::array();
  std::vector<TokenLogprobs> logprobs_;
  std::string finish_reason_ = "stop";
  ChatUsage usage_;
};

nlohmann::ordered_json UsageJson(const ChatUsage& usage);

// The HTTP status and vLLM-shaped body for an error; the engine's refusals of a request
// (InvalidArgument, a request larger than the memory budget) are 400.
int ErrorHttpStatus(const Status& status);
nlohmann::ordered_json ErrorJson(const Status& status);

}  // namespace kimi::tools
