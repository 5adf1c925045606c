#include "upstream/chunk_normalizer.h"

#include <optional>
#include <string_view>

#include "api/response_meta.h"
#include "kimi/json_integer.h"
#include "kimi/log.h"
#include "kimi/logprobs_json.h"
#include "kimi/untrusted_json.h"
#include "upstream/plain_chunk.h"

namespace kimi::upstream {
namespace {

using Json = nlohmann::json;
using api::StreamEvent;
using api::StreamEventKind;

std::string StringField(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

int64_t IntegerField(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// A token count an upstream reports: it feeds the key's quotas, budgets and audit record, so a
// negative count (a lying upstream refunded a key's quota with -1,000,000), one past int64 (2^64-1
// read as -1) or one no context holds is refused, not believed. Absent: 0.
Result<int64_t> TokenCount(const Json& object, const char* key) {
  constexpr int64_t kMaxTokenCount = int64_t{1} << 32;
  if (!object.is_object()) return int64_t{0};
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return int64_t{0};
  const std::optional<int64_t> n = JsonInteger(*it);
  if (!n || *n < 0 || *n > kMaxTokenCount) {
    return Status::Corruption(std::string("upstream reported an impossible usage.") + key + ": " + it->dump());
  }
  return *n;
}

StreamEvent TextEvent(StreamEventKind kind, std::string text) {
  StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

// The finish reasons the encoders know; other values an upstream may use are mapped onto them.
// More calls in one answer than any model makes; past it an upstream is sending without end.
constexpr int kMaxToolCalls = 1024;

std::string NormalFinishReason(const std::string& upstream) {
  if (upstream == "length") return "length";
  if (upstream == "tool_calls" || upstream == "function_call") return "tool_calls";
  return "stop";  // "stop", "eos", "stop_sequence", "content_filter", ...
}

}  // namespace

Status UpstreamErrorStatus(const Json& error_body, int http_status, const std::string& upstream_name) {
  const Json* error = &error_body;
  if (error_body.is_object() && error_body.contains("error") && error_body["error"].is_object()) {
    error = &error_body["error"];
  }
  std::string message = StringField(*error, "message");
  if (message.empty() && error_body.is_object() && error_body.contains("error") && error_body["error"].is_string()) {
    message = error_body["error"].get<std::string>();
  }
  // What the client is told is the upstream's gist, not a body it chose the size of.
  constexpr size_t kMaxForwardedMessageBytes = 1024;
  if (message.size() > kMaxForwardedMessageBytes) {
    message = message.substr(0, api::Utf8PrefixLength(message, kMaxForwardedMessageBytes)) + "…[cut]";
  }
  const std::string upstream = "upstream " + upstream_name;
  if (http_status == 0) {
    // An error inside a stream that began: the generation failed there, whatever code the
    // upstream wrote into the event.
    return Status::Unavailable(upstream + " failed mid-stream: " + (message.empty() ? "no message" : message));
  }
  const std::string answered = upstream + " answered HTTP " + std::to_string(http_status);
  if (message.empty()) message = answered;
  // The request's own content (too long, a bad field): the client's to fix, in the upstream's words.
  if (http_status == 400 || http_status == 413 || http_status == 422) return Status::InvalidArgument(message);
  if (http_status == 429) return Status::ResourceExhausted(upstream + " is overloaded: " + message);
  // Any other refusal (401, 403, 404, 405, ...) says the appliance's configuration of the
  // upstream is wrong, not the client's request; its message may quote the appliance's own
  // credential, so the client gets only the status (the log has the message).
  if (http_status >= 400 && http_status < 500) {
    log::Warn("upstream refused a request", {{"backend", upstream_name}, {"status", std::to_string(http_status)},
                                             {"message", message}});
    return Status::BadGateway(answered + ": the appliance's configuration of this upstream is wrong");
  }
  return Status::Unavailable(upstream + ": " + message);
}

Status ChunkNormalizer::Consume(const Json& chunk, std::vector<StreamEvent>* events) {
  if (!chunk.is_object()) return Status::Corruption("upstream chunk is not a JSON object");
  if (chunk.contains("error") || StringField(chunk, "object") == "error") {
    return UpstreamErrorStatus(chunk, 0, "stream");
  }
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    KIMI_ASSIGN_OR_RETURN(usage_.prompt_tokens, TokenCount(*u, "prompt_tokens"));
    KIMI_ASSIGN_OR_RETURN(usage_.completion_tokens, TokenCount(*u, "completion_tokens"));
    if (auto d = u->find("completion_tokens_details"); d != u->end()) {
      KIMI_ASSIGN_OR_RETURN(usage_.reasoning_tokens, TokenCount(*d, "reasoning_tokens"));
    }
  }
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || choices->is_null()) return Status::OK();
  if (!choices->is_array()) return Status::Corruption("upstream chunk: choices is not an array");
  for (const Json& choice : *choices) {
    if (IntegerField(choice, "index") != 0) {
      return Status::Corruption("upstream sent a second choice; only n = 1 is served");
    }
    const size_t first_new = events->size();
    if (!finish_reason_.empty()) return ContentAfterFinish(choice);
    if (auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
      KIMI_RETURN_IF_ERROR(ConsumeDelta(*delta, events));
    } else if (auto message = choice.find("message"); message != choice.end() && message->is_object()) {
      KIMI_RETURN_IF_ERROR(ConsumeDelta(*message, events));
    } else if (std::string text = StringField(choice, "text"); !text.empty()) {
      events->push_back(TextEvent(StreamEventKind::kAnswer, std::move(text)));  // /v1/completions
    }
    KIMI_RETURN_IF_ERROR(AttachLogprobs(choice, first_new, events));
    std::string reason = StringField(choice, "finish_reason");
    if (!reason.empty()) finish_reason_ = NormalFinishReason(reason);
  }
  return Status::OK();
}

// After its finish_reason a choice may only repeat it empty-handed (vLLM's usage chunk has no
// choice at all): text or calls past the end, or a second reason, are outside the protocol.
Status ChunkNormalizer::ContentAfterFinish(const Json& choice) {
  std::vector<StreamEvent> late;
  if (auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
    KIMI_RETURN_IF_ERROR(ConsumeDelta(*delta, &late));
  }
  std::string reason = StringField(choice, "finish_reason");
  if (!late.empty() || !StringField(choice, "text").empty() || choice.contains("message") ||
      (!reason.empty() && NormalFinishReason(reason) != finish_reason_)) {
    return Status::Corruption("upstream sent content or another finish_reason after finish_reason");
  }
  return Status::OK();
}

// The choice's logprobs belong to the answer text it carried (none for reasoning or calls).
Status ChunkNormalizer::AttachLogprobs(const Json& choice, size_t first_new, std::vector<StreamEvent>* events) {
  auto logprobs = choice.find("logprobs");
  if (logprobs == choice.end() || !logprobs->is_object()) return Status::OK();
  StreamEvent* answer = nullptr;
  for (size_t i = first_new; i < events->size(); ++i) {
    if ((*events)[i].kind == StreamEventKind::kAnswer) answer = &(*events)[i];
  }
  if (answer == nullptr) return Status::OK();
  Result<std::vector<TokenLogprobs>> parsed = logprobs->contains("content")
                                                  ? chat::ParseChatLogprobsContent((*logprobs)["content"])
                                                  : chat::ParseCompletionLogprobs(*logprobs);
  if (!parsed.ok()) return Status::Corruption("upstream logprobs: " + parsed.status().message());
  answer->logprobs = std::move(parsed).value();
  return Status::OK();
}

Status ChunkNormalizer::ConsumeText(std::string_view data, std::vector<StreamEvent>* events) {
  PlainChunk plain;
  if (ReadPlainChunk(data, &plain)) {
    if (!plain.has_choice) return Status::OK();
    if (!finish_reason_.empty() &&
        (!plain.reasoning_content.empty() || !plain.reasoning.empty() || !plain.content.empty() ||
         (!plain.finish_reason.empty() && NormalFinishReason(plain.finish_reason) != finish_reason_))) {
      return Status::Corruption("upstream sent content or another finish_reason after finish_reason");
    }
    ConsumeDeltaText(std::move(plain.reasoning_content), std::move(plain.reasoning), std::move(plain.content), events);
    if (!plain.finish_reason.empty()) finish_reason_ = NormalFinishReason(plain.finish_reason);
    return Status::OK();
  }
  Result<Json> chunk = ParseUntrustedJson(data, "upstream sent an event");
  if (!chunk.ok()) return chunk.status();
  return Consume(*chunk, events);
}

void ChunkNormalizer::ConsumeDeltaText(std::string reasoning_content, std::string reasoning, std::string content,
                                       std::vector<StreamEvent>* events) {
  if (reasoning_content.empty()) reasoning_content = std::move(reasoning);
  if (!reasoning_content.empty()) {
    CloseOpenCall(events);
    events->push_back(TextEvent(StreamEventKind::kReasoning, std::move(reasoning_content)));
  }
  if (!content.empty()) {
    CloseOpenCall(events);
    events->push_back(TextEvent(StreamEventKind::kAnswer, std::move(content)));
  }
}

Status ChunkNormalizer::ConsumeDelta(const Json& delta, std::vector<StreamEvent>* events) {
  ConsumeDeltaText(StringField(delta, "reasoning_content"), StringField(delta, "reasoning"),
                   StringField(delta, "content"), events);
  auto calls = delta.find("tool_calls");
  if (calls == delta.end() || calls->is_null()) return Status::OK();
  if (!calls->is_array()) return Status::Corruption("upstream delta: tool_calls is not an array");
  for (size_t i = 0; i < calls->size(); ++i) {
    KIMI_RETURN_IF_ERROR(ConsumeToolCall((*calls)[i], i, events));
  }
  return Status::OK();
}

Status ChunkNormalizer::ConsumeToolCall(const Json& call, size_t position, std::vector<StreamEvent>* events) {
  if (!call.is_object()) return Status::Corruption("upstream tool call piece is not an object");
  const Json empty = Json::object();
  auto fn = call.find("function");
  const Json& function = fn != call.end() && fn->is_object() ? *fn : empty;
  std::string name = StringField(function, "name");

  long long key;
  if (auto index = call.find("index"); index != call.end() && !index->is_null()) {
    // Upstream indices are small and non-negative; the negative keys are this class's own,
    // for calls sent without one, and must not be reachable from the wire.
    const std::optional<int64_t> n = JsonInteger(*index);
    if (!n || *n < 0 || *n >= kMaxToolCalls) {
      return Status::Corruption("upstream tool call index out of range: " + index->dump());
    }
    key = *n;
  } else if (!name.empty()) {
    key = -1 - synthetic_keys_++;  // a whole call without an index: a new call
  } else if (call_open_) {
    key = open_key_;
  } else {
    return Status::Corruption("upstream tool call piece #" + std::to_string(position) +
                              " has neither an index nor a name");
  }

  std::string id = StringField(call, "id");
  auto known = call_index_.find(key);
  if (known != call_index_.end() && !name.empty() && !id.empty() && id != call_ids_[key]) {
    // Some servers send every whole call at index 0: a new id and name make it a new call.
    key = -1 - synthetic_keys_++;
    known = call_index_.end();
  }
  if (known == call_index_.end()) {
    if (name.empty()) return Status::Corruption("upstream tool call begins without a function name");
    if (calls_begun_ >= kMaxToolCalls) {
      return Status::Corruption("upstream began more than " + std::to_string(kMaxToolCalls) + " tool calls");
    }
    CloseOpenCall(events);
    int index = calls_begun_++;
    call_index_[key] = index;
    open_key_ = key;
    call_open_ = true;
    StreamEvent begin;
    begin.kind = StreamEventKind::kToolCallBegin;
    begin.tool_index = index;
    begin.tool_call_id = id;
    call_ids_[key] = id;
    if (begin.tool_call_id.empty()) begin.tool_call_id = "call_" + std::to_string(index);
    begin.tool_name = std::move(name);
    events->push_back(std::move(begin));
  } else if (!call_open_ || open_key_ != key) {
    return Status::Corruption("upstream interleaved the pieces of two tool calls");
  }

  // Arguments are JSON text; a server that sends them as an object gets them re-serialised.
  std::string arguments;
  if (auto a = function.find("arguments"); a != function.end()) {
    if (a->is_string()) arguments = a->get<std::string>();
    else if (a->is_object()) arguments = a->dump();
  }
  if (!arguments.empty()) {
    StreamEvent piece;
    piece.kind = StreamEventKind::kToolCallArguments;
    piece.tool_index = call_index_[key];
    piece.text = std::move(arguments);
    events->push_back(std::move(piece));
  }
  return Status::OK();
}

void ChunkNormalizer::CloseOpenCall(std::vector<StreamEvent>* events) {
  if (!call_open_) return;
  StreamEvent end;
  end.kind = StreamEventKind::kToolCallEnd;
  end.tool_index = call_index_[open_key_];
  events->push_back(std::move(end));
  call_open_ = false;
}

Status ChunkNormalizer::Finish(std::vector<StreamEvent>* events) {
  if (finish_reason_.empty()) {
    return Status::Unavailable("upstream stream ended without a finish_reason");
  }
  CloseOpenCall(events);
  StreamEvent finish;
  finish.kind = StreamEventKind::kFinish;
  // A turn that made calls ends with "tool_calls" whatever word the upstream used for it.
  finish.finish_reason = calls_begun_ > 0 && finish_reason_ == "stop" ? "tool_calls" : finish_reason_;
  finish.usage = usage_;
  events->push_back(std::move(finish));
  return Status::OK();
}

void ChunkNormalizer::FinishAtLength(int64_t completion_tokens, std::vector<StreamEvent>* events) {
  CloseOpenCall(events);
  StreamEvent finish;
  finish.kind = StreamEventKind::kFinish;
  finish.finish_reason = "length";
  finish.usage.prompt_tokens = usage_.prompt_tokens;
  finish.usage.completion_tokens = completion_tokens;
  events->push_back(std::move(finish));
}

}  // namespace kimi::upstream
