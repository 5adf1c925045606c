#include "api/embedded_backend.h"

#include "api/response_meta.h"
#include "kimi/runtime.h"

namespace kimi::api {

StreamEvent ToStreamEvent(const OutputEvent& output) {
  StreamEvent e;
  e.text = output.text;
  e.tool_index = output.tool_index;
  switch (output.kind) {
    case OutputEventKind::kReasoning: e.kind = StreamEventKind::kReasoning; break;
    case OutputEventKind::kAnswer: e.kind = StreamEventKind::kAnswer; break;
    case OutputEventKind::kToolCallBegin:
      e.kind = StreamEventKind::kToolCallBegin;
      e.tool_name = output.tool_name;
      e.tool_call_id = ToolCallId(output.tool_name, output.tool_index);
      break;
    case OutputEventKind::kToolCallArguments: e.kind = StreamEventKind::kToolCallArguments; break;
    case OutputEventKind::kToolCallEnd: e.kind = StreamEventKind::kToolCallEnd; break;
  }
  return e;
}

EmbeddedBackend::EmbeddedBackend(std::string served_model_id) : model_id_(std::move(served_model_id)) {}

void EmbeddedBackend::Attach(std::shared_ptr<ChatService> service, ServedVersionId id) {
  std::lock_guard<std::mutex> lock(mu_);
  attached_ = Attached{std::move(service), std::move(id)};
}

EmbeddedBackend::Attached EmbeddedBackend::attached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return attached_;
}

std::shared_ptr<ChatService> EmbeddedBackend::service() const { return attached().service; }

std::vector<std::string> EmbeddedBackend::Models() const {
  if (service() == nullptr) return {};
  return {model_id_};
}

bool EmbeddedBackend::Healthy(std::string_view model) const { return service() != nullptr && model == model_id_; }

Status EmbeddedBackend::Generate(const BackendRequest& request, EventSink& sink, BackendOutcome* outcome) {
  // One copy of the engine and its identity: the version named is the one that serves.
  const Attached now = attached();
  if (outcome != nullptr) *outcome = BackendOutcome{std::string(name()), 1, {}, now.id.digest, now.id.version};
  const std::shared_ptr<ChatService>& service = now.service;
  if (service == nullptr) return Status::Unavailable("the model is not loaded yet");
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<ChatStream> stream,
                        service->Start(request.serving, {.priority = request.priority,
                                                         .prefix_cache_scope = PrefixCacheScope(request.prefix_cache_scope),
                                                         .prepared = request.encoded_prompt.get()}));
  // A request waiting for a place in the running batch emits nothing until it has one; a
  // client that leaves meanwhile drops it from the queue at the scheduler's next step.
  const CancelWhileRegistered cancel_on_hang_up(sink, [&stream] { stream->Cancel(); });
  ChatEvent event;
  while (stream->Next(&event)) {
    StreamEvent out;
    switch (event.kind) {
      case ChatEvent::Kind::kError:
        // The runtime refuses a request whose worst case exceeds its whole memory budget: the
        // client must shorten it, so it is an invalid request, not a transient overload.
        if (event.error.code() == Status::Code::kResourceExhausted) return Status::InvalidArgument(event.error.message());
        return event.error;
      case ChatEvent::Kind::kOutput:
        out = ToStreamEvent(event.output);
        out.logprobs = std::move(event.logprobs);
        out.usage.prompt_tokens = stream->prompt_tokens();
        break;
      case ChatEvent::Kind::kFinish:
        out.kind = StreamEventKind::kFinish;
        out.finish_reason = event.finish_reason;
        out.usage = TokenUsage{event.usage.prompt_tokens, event.usage.completion_tokens, event.usage.reasoning_tokens};
        break;
    }
    out.tokens = event.tokens;
    if (!sink.Emit(out)) {
      stream->Cancel();
      return Status::Cancelled("the client went away");
    }
    if (out.kind == StreamEventKind::kFinish) return Status::OK();
  }
  return Status::Internal("the generation ended without a finish event");
}

}  // namespace kimi::api
