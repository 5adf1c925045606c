#include "tools/serve_protocol.h"

#include <ctime>
#include <random>

#include "kimi/hex.h"
#include "kimi/logprobs_json.h"
#include "kimi/sse_frame.h"
#include "kimi/tokenizer_utf8.h"

namespace kimi::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string RandomHex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string raw(bytes, '\0');
  for (char& c : raw) c = static_cast<char>(rng() & 0xff);
  return HexEncode(raw);
}

std::string ToolCallId() { return "chatcmpl-tool-" + RandomHex(8); }

bool IsChat(const ResponseIdentity& identity) { return identity.endpoint == ServingEndpoint::kChatCompletions; }

}  // namespace

ResponseIdentity NewResponseIdentity(const std::string& model, ServingEndpoint endpoint) {
  bool chat = endpoint == ServingEndpoint::kChatCompletions;
  return ResponseIdentity{(chat ? "chatcmpl-" : "cmpl-") + RandomHex(12), static_cast<int64_t>(std::time(nullptr)),
                          model, endpoint};
}

Json UsageJson(const ChatUsage& usage) {
  return Json{{"prompt_tokens", usage.prompt_tokens},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
              {"completion_tokens", usage.completion_tokens},
              {"completion_tokens_details", {{"reasoning_tokens", usage.reasoning_tokens}}},
              {"prompt_tokens_details", nullptr}};
}

ChunkWriter::ChunkWriter(ResponseIdentity identity, bool include_usage)
    : identity_(std::move(identity)), include_usage_(include_usage) {}

std::string ChunkWriter::Frame(const Json& delta, const Json& finish_reason, const std::vector<TokenLogprobs>& logprobs) {
  Json choice = {{"index", 0}};
  if (IsChat(identity_)) {
    choice["delta"] = delta;
    choice["logprobs"] = logprobs.empty() ? Json(nullptr) : Json{{"content", chat::ChatLogprobsContent(logprobs)}};
  } else {
    const std::string text = delta.value("content", "");
    choice["text"] = text;
    choice["logprobs"] = logprobs.empty() ? Json(nullptr) : chat::CompletionLogprobs(logprobs, text_offset_);
    text_offset_ += int64_t(text.size());
  }
  choice["finish_reason"] = finish_reason;
  Json chunk = {{"id", identity_.id},
                {"object", IsChat(identity_) ? "chat.completion.chunk" : "text_completion"},
                {"created", identity_.created},
                {"model", identity_.model},
                {"choices", Json::array({choice})}};
  return SseDataFrame(chunk.dump());
}

std::string ChunkWriter::RoleFrame() {
  return IsChat(identity_) ? Frame(Json{{"role", "assistant"}, {"content", ""}}, nullptr) : "";
}

std::string ChunkWriter::OutputFrame(const ChatEvent& chat_event) {
  const OutputEvent& event = chat_event.output;
  // A completion has no channels: everything the model wrote is its text.
  if (!IsChat(identity_)) {
    return event.text.empty() ? "" : Frame(Json{{"content", event.text}}, nullptr, chat_event.logprobs);
  }
  switch (event.kind) {
    case OutputEventKind::kReasoning: return Frame(Json{{"reasoning", event.text}}, nullptr);
    case OutputEventKind::kAnswer: return Frame(Json{{"content", event.text}}, nullptr, chat_event.logprobs);
    case OutputEventKind::kToolCallBegin: {
      std::string id = ToolCallId();
      call_ids_[event.tool_index] = id;
      Json call = {{"index", event.tool_index}, {"id", id}, {"type", "function"},
                   {"function", {{"name", event.tool_name}, {"arguments", ""}}}};
      return Frame(Json{{"tool_calls", Json::array({call})}}, nullptr);
    }
    case OutputEventKind::kToolCallArguments: {
      Json call = {{"index", event.tool_index}, {"function", {{"arguments", event.text}}}};
      return Frame(Json{{"tool_calls", Json::array({call})}}, nullptr);
    }
    case OutputEventKind::kToolCallEnd: return "";
  }
  return "";
}

std::string ChunkWriter::FinishFrames(const ChatEvent& finish) {
  std::string out = Frame(Json::object(), finish.finish_reason);
  if (include_usage_) {
    Json chunk = {{"id", identity_.id},
                  {"object", IsChat(identity_) ? "chat.completion.chunk" : "text_completion"},
                  {"created", identity_.created},
                  {"model", identity_.model},
                  {"choices", Json::array()},
                  {"usage", UsageJson(finish.usage)}};
    out += SseDataFrame(chunk.dump());
  }
  out += kSseDone;
  return out;
}

void ResponseBuilder::Add(const ChatEvent& event) {
  if (event.kind == ChatEvent::Kind::kFinish) {
    finish_reason_ = event.finish_reason;
    usage_ = event.usage;
    return;
  }
  if (event.kind != ChatEvent::Kind::kOutput) return;
  const OutputEvent& o = event.output;
  switch (o.kind) {
    case OutputEventKind::kReasoning: reasoning_ += o.text; break;
    case OutputEventKind::kAnswer:
      content_ += o.text;
      logprobs_.insert(logprobs_.end(), event.logprobs.begin(), event.logprobs.end());
      break;
    case OutputEventKind::kToolCallBegin:
      tool_calls_.push_back(Json{{"id", ToolCallId()}, {"type", "function"},
                                 {"function", {{"name", o.tool_name}, {"arguments", ""}}}});
      break;
    case OutputEventKind::kToolCallArguments:
      if (o.tool_index >= 0 && static_cast<size_t>(o.tool_index) < tool_calls_.size()) {
        tool_calls_[o.tool_index]["function"]["arguments"] =
            tool_calls_[o.tool_index]["function"]["arguments"].get<std::string>() + o.text;
      }
      break;
    case OutputEventKind::kToolCallEnd: break;
  }
}

Json ResponseBuilder::Build() const {
  if (!IsChat(identity_)) {
    return Json{{"id", identity_.id},
                {"object", "text_completion"},
                {"created", identity_.created},
                {"model", identity_.model},
                {"choices", Json::array({Json{{"index", 0}, {"text", reasoning_ + content_},
                                              {"logprobs", logprobs_.empty() ? Json(nullptr) : chat::CompletionLogprobs(logprobs_, 0)},
                                              {"finish_reason", finish_reason_}}})},
                {"usage", UsageJson(usage_)}};
  }
  Json message = {{"role", "assistant"},
                  {"content", content_.empty() && !tool_calls_.empty() ? Json(nullptr) : Json(content_)},
                  {"reasoning", reasoning_.empty() ? Json(nullptr) : Json(reasoning_)},
                  {"tool_calls", tool_calls_}};
  return Json{{"id", identity_.id},
              {"object", "chat.completion"},
              {"created", identity_.created},
              {"model", identity_.model},
              {"choices", Json::array({Json{{"index", 0}, {"message", message},
                                            {"logprobs", logprobs_.empty() ? Json(nullptr) : Json{{"content", chat::ChatLogprobsContent(logprobs_)}}},
                                            {"finish_reason", finish_reason_}}})},
              {"usage", UsageJson(usage_)}};
}

int ErrorHttpStatus(const Status& status) {
  switch (status.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kResourceExhausted:
    case Status::Code::kFailedPrecondition: return 400;
    case Status::Code::kPermissionDenied: return 403;
    case Status::Code::kNotFound: return 404;
    case Status::Code::kUnimplemented: return 501;
    case Status::Code::kUnavailable: return 503;
    default: return 500;
  }
}

nlohmann::ordered_json ErrorJson(const Status& status) {
  int http = ErrorHttpStatus(status);
  const char* type = http == 400   ? "BadRequestError"
                     : http == 403 ? "PermissionDeniedError"
                     : http == 404 ? "NotFoundError"
                                   : "InternalServerError";
  // A message may quote bytes of the request cut anywhere; a JSON writer refuses (throws on)
  // text that is not UTF-8, which in a stream's provider would end the process.
  return Json{{"object", "error"}, {"message", text::ReplaceInvalidUtf8(status.message())}, {"type", type}, {"param", nullptr},
              {"code", http}};
}

}  // namespace kimi::tools
