#include "api/chat_response_builder.h"

#include "kimi/logprobs_json.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

BuiltToolCall* ChatResponseBuilder::Call(int index) {
  for (BuiltToolCall& c : tool_calls_) {
    if (c.index == index) return &c;
  }
  tool_calls_.push_back(BuiltToolCall{index, "", "", ""});
  return &tool_calls_.back();
}

bool ChatResponseBuilder::Emit(const StreamEvent& event) {
  switch (event.kind) {
    case StreamEventKind::kReasoning: reasoning_ += event.text; break;
    case StreamEventKind::kAnswer:
      answer_ += event.text;
      logprobs_.insert(logprobs_.end(), event.logprobs.begin(), event.logprobs.end());
      break;
    case StreamEventKind::kToolCallBegin: {
      BuiltToolCall* call = Call(event.tool_index);
      call->name = event.tool_name;
      call->id = event.tool_call_id.empty() ? ToolCallId(event.tool_name, event.tool_index) : event.tool_call_id;
      break;
    }
    case StreamEventKind::kToolCallArguments: Call(event.tool_index)->arguments += event.text; break;
    case StreamEventKind::kToolCallEnd: break;
    case StreamEventKind::kFinish: finish_ = event; break;
  }
  return true;
}

Json ChatResponseBuilder::Build(const ResponseMeta& meta) const {
  Json message{{"role", "assistant"}, {"content", answer_}};
  if (!reasoning_.empty()) message["reasoning_content"] = reasoning_;
  if (!tool_calls_.empty()) {
    Json calls = Json::array();
    for (const BuiltToolCall& c : tool_calls_) {
      calls.push_back(Json{{"id", c.id}, {"type", "function"}, {"function", Json{{"name", c.name}, {"arguments", c.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  const TokenUsage usage = finish_ ? finish_->usage : TokenUsage{};
  Json choice{{"index", 0}, {"message", std::move(message)}};
  if (logprobs_requested_) choice["logprobs"] = Json{{"content", chat::ChatLogprobsContent(logprobs_)}};
  choice["finish_reason"] = finish_ ? finish_->finish_reason : "stop";
  return Json{{"id", meta.id},
              {"object", "chat.completion"},
              {"created", meta.created},
              {"model", meta.model},
              {"choices", Json::array({std::move(choice)})},
              {"usage", UsageJson(usage)}};
}

}  // namespace kimi::api
