#include "kimi/chat_service.h"

#include <algorithm>
#include <deque>

#include "kimi/chat_format.h"
#include "kimi/log.h"
#include "kimi/prompt_encoding.h"
#include "serving/generation_params.h"
#include "serving/visible_text.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;

Result<SpecialTokenIds> SpecialIdsOf(const Tokenizer& tokenizer) {
  SpecialTokenIds ids;
  struct Named {
    std::string_view text;
    int32_t* id;
  };
  const Named named[] = {{k3::kEos, &ids.eos}, {k3::kEndOfMessage, &ids.end_of_message}, {k3::kOpen, &ids.open},
                         {k3::kClose, &ids.close}, {k3::kSep, &ids.sep}};
  for (const Named& n : named) {
    std::optional<int32_t> id = tokenizer.SpecialTokenId(n.text);
    if (!id) return Status::FailedPrecondition("the tokenizer has no special token " + std::string(n.text));
    *n.id = *id;
  }
  return ids;
}

// The prompt of a /v1/completions body: a string, or an array holding one string.
Result<std::string> CompletionPrompt(const Json& body) {
  if (!body.is_object() || !body.contains("prompt")) return Status::InvalidArgument("prompt is required");
  const Json& prompt = body["prompt"];
  if (prompt.is_string()) return prompt.get<std::string>();
  if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) return prompt[0].get<std::string>();
  return Status::InvalidArgument("prompt must be a string (or an array of one string)");
}

class ChatStreamImpl : public ChatStream {
 public:
  ChatStreamImpl(std::unique_ptr<RequestHandle> handle, std::unique_ptr<OutputParser> parser, const Tokenizer& tokenizer,
                 bool starts_in_reasoning, int64_t prompt_tokens)
      : handle_(std::move(handle)),
        parser_(std::move(parser)),
        tokenizer_(tokenizer),
        in_reasoning_(starts_in_reasoning),
        prompt_tokens_(prompt_tokens) {}

  bool Next(ChatEvent* event) override {
    for (;;) {
      if (!pending_.empty()) {
        *event = std::move(pending_.front());
        pending_.pop_front();
        return true;
      }
      if (ended_) return false;
      GenerationEvent g;
      if (!handle_->Next(&g)) {
        ended_ = true;
        continue;
      }
      switch (g.kind) {
        case GenerationEvent::Kind::kToken: OnToken(g); break;
        case GenerationEvent::Kind::kFinish: OnFinish(g); break;
        case GenerationEvent::Kind::kError: {
          ChatEvent e;
          e.kind = ChatEvent::Kind::kError;
          e.error = g.error;
          pending_.push_back(std::move(e));
          ended_ = true;
          break;
        }
      }
    }
  }

  void Cancel() override { handle_->Cancel(); }
  int64_t prompt_tokens() const override { return prompt_tokens_; }

 private:
  void OnToken(const GenerationEvent& g) {
    std::vector<OutputEvent> events;
    if (parser_ == nullptr) {
      if (!g.text.empty()) events.push_back(OutputEvent{OutputEventKind::kAnswer, g.text, "", -1});
    } else {
      // The runtime's text is whole characters of ordinary tokens, possibly released late
      // (held back for a stop string) together with a special token: the text goes first.
      if (!g.text.empty()) parser_->Feed(GeneratedToken{-1, g.text}, &events);
      if (tokenizer_.IsSpecial(g.token)) parser_->Feed(GeneratedToken{g.token, ""}, &events);
    }
    CountReasoning(events);
    Queue(events);
  }

  // A token belongs to the thinking channel when it produced reasoning text, or produced
  // nothing while the output was last in that channel (markup, held-back bytes).
  void CountReasoning(const std::vector<OutputEvent>& events) {
    bool reasoning = events.empty() ? in_reasoning_ : false;
    for (const OutputEvent& e : events) {
      if (e.kind == OutputEventKind::kReasoning) reasoning = true;
      in_reasoning_ = e.kind == OutputEventKind::kReasoning;
    }
    if (reasoning) ++reasoning_tokens_;
  }

  void OnFinish(const GenerationEvent& g) {
    ended_ = true;
    if (g.finish_reason == FinishReason::kCancelled) return;
    if (parser_ != nullptr) {
      std::vector<OutputEvent> events;
      parser_->Finish(&events);
      Queue(events);
    }
    ChatEvent e;
    e.kind = ChatEvent::Kind::kFinish;
    e.finish_reason = g.finish_reason == FinishReason::kLength ? "length" : saw_tool_call_ ? "tool_calls" : "stop";
    e.usage.prompt_tokens = prompt_tokens_;
    e.usage.completion_tokens = g.stats.completion_tokens;
    e.usage.reasoning_tokens = std::min(reasoning_tokens_, g.stats.completion_tokens);
    pending_.push_back(std::move(e));
  }

  void Queue(std::vector<OutputEvent>& events) {
    for (OutputEvent& o : events) {
      if (o.kind == OutputEventKind::kToolCallBegin) saw_tool_call_ = true;
      ChatEvent e;
      e.kind = ChatEvent::Kind::kOutput;
      e.output = std::move(o);
      pending_.push_back(std::move(e));
    }
  }

  std::unique_ptr<RequestHandle> handle_;
  std::unique_ptr<OutputParser> parser_;  // null for /v1/completions: all output is answer text
  Tokenizer tokenizer_;
  bool in_reasoning_;
  int64_t prompt_tokens_;
  int64_t reasoning_tokens_ = 0;
  bool saw_tool_call_ = false;
  bool ended_ = false;
  std::deque<ChatEvent> pending_;
};

}  // namespace

Result<std::unique_ptr<ChatService>> ChatService::Open(const std::string& model_dir, ChatServiceOptions options) {
  KIMI_ASSIGN_OR_RETURN(Tokenizer tokenizer, Tokenizer::LoadDirectory(model_dir));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(model_dir, options.model));
  return Create(std::move(model), std::move(tokenizer), std::move(options));
}

Result<std::unique_ptr<ChatService>> ChatService::Create(std::unique_ptr<Model> model, Tokenizer tokenizer,
                                                         ChatServiceOptions options) {
  if (tokenizer.vocab_size() > model->config().vocab_size) {
    return Status::FailedPrecondition("the tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                                      " ids but the model's vocab_size is " +
                                      std::to_string(model->config().vocab_size));
  }
  if (options.default_max_tokens < 1) return Status::InvalidArgument("default_max_tokens must be at least 1");
  KIMI_ASSIGN_OR_RETURN(SpecialTokenIds ids, SpecialIdsOf(tokenizer));
  // Fail at start-up, not on the first request, when the parser name is unknown.
  KIMI_RETURN_IF_ERROR(OutputParserRegistry::Create(options.output_parser, {ids, OutputStart::kThinkChannel}).status());
  options.runtime.stop_token_ids = {ids.end_of_message, ids.eos};
  options.runtime.detokenizer = serving::VisibleTextDetokenizer(tokenizer);
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(std::move(model), options.runtime));
  return std::unique_ptr<ChatService>(new ChatService(std::move(runtime), std::move(tokenizer), ids, std::move(options)));
}

ChatService::ChatService(std::unique_ptr<Runtime> runtime, Tokenizer tokenizer, SpecialTokenIds special_ids,
                         ChatServiceOptions options)
    : runtime_(std::move(runtime)),
      tokenizer_(std::move(tokenizer)),
      special_ids_(special_ids),
      options_(std::move(options)) {}

ChatService::~ChatService() = default;

Result<std::unique_ptr<ChatStream>> ChatService::Start(const Json& body, ServingEndpoint endpoint) {
  KIMI_ASSIGN_OR_RETURN(serving::GenerationParams params, serving::GenerationParamsFromBody(body));
  std::vector<int32_t> ids;
  int64_t prompt_tokens = 0;
  std::unique_ptr<OutputParser> parser;
  bool starts_in_reasoning = false;
  if (endpoint == ServingEndpoint::kChatCompletions) {
    KIMI_ASSIGN_OR_RETURN(ChatRequest request, ParseChatRequest(body));
    KIMI_ASSIGN_OR_RETURN(RenderedPrompt rendered, ChatFormat::Render(request));
    KIMI_ASSIGN_OR_RETURN(PromptIds prompt, EncodePrompt(tokenizer_, rendered));
    const OutputStart start = ChatFormat::OutputStartFor(request);
    KIMI_ASSIGN_OR_RETURN(parser, OutputParserRegistry::Create(options_.output_parser, {special_ids_, start}));
    starts_in_reasoning = start == OutputStart::kThinkChannel;
    ids = std::move(prompt.ids);
    prompt_tokens = int64_t(prompt.prompt_tokens);
  } else {
    KIMI_ASSIGN_OR_RETURN(std::string text, CompletionPrompt(body));
    KIMI_ASSIGN_OR_RETURN(ids, tokenizer_.Encode(text, /*allow_special=*/false));
    if (ids.empty()) return Status::InvalidArgument("prompt must not be empty");
    prompt_tokens = int64_t(ids.size());
  }
  const int64_t context = runtime_->model().config().max_position_embeddings;
  const int64_t room = context - int64_t(ids.size());
  if (room < 1) {
    return Status::InvalidArgument("the prompt has " + std::to_string(ids.size()) +
                                   " tokens; the model's context is " + std::to_string(context));
  }
  GenerationRequest request;
  request.prompt = std::move(ids);
  request.sampling = params.sampling;
  request.stop = std::move(params.stop);
  request.max_tokens = std::min(params.max_tokens.value_or(options_.default_max_tokens), room);
  std::unique_ptr<RequestHandle> handle = runtime_->Submit(std::move(request));
  return std::unique_ptr<ChatStream>(
      new ChatStreamImpl(std::move(handle), std::move(parser), tokenizer_, starts_in_reasoning, prompt_tokens));
}

RuntimeCounters ChatService::Counters() const { return runtime_->Counters(); }

}  // namespace kimi
