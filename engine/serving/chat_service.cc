#include "kimi/chat_service.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "kimi/chat_format.h"
#include "serving/chat_event_assembler.h"
#include "serving/structured_request.h"
#include "serving/visible_text.h"

namespace kimi {
namespace {


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

class ChatStreamImpl : public ChatStream {
 public:
  ChatStreamImpl(std::unique_ptr<RequestHandle> handle, serving::ChatEventAssembler assembler, int64_t prompt_tokens)
      : handle_(std::move(handle)), assembler_(std::move(assembler)), prompt_tokens_(prompt_tokens) {}

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
        case GenerationEvent::Kind::kToken: assembler_.OnToken(g.token, g.text, &pending_, &g.sampled); break;
        case GenerationEvent::Kind::kFinish:
          assembler_.OnFinish(g.finish_reason, g.stats.completion_tokens, &pending_);
          ended_ = true;
          break;
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
  std::unique_ptr<RequestHandle> handle_;
  serving::ChatEventAssembler assembler_;
  int64_t prompt_tokens_;
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
  KIMI_ASSIGN_OR_RETURN(std::shared_ptr<const StructuredVocabulary> vocabulary, StructuredVocabulary::Build(tokenizer));
  auto structured = std::make_unique<serving::StructuredRequests>(std::move(vocabulary));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(std::move(model), options.runtime));
  return std::unique_ptr<ChatService>(
      new ChatService(std::move(runtime), std::move(tokenizer), ids, std::move(options), std::move(structured)));
}

ChatService::ChatService(std::unique_ptr<Runtime> runtime, Tokenizer tokenizer, SpecialTokenIds special_ids,
                         ChatServiceOptions options, std::unique_ptr<serving::StructuredRequests> structured)
    : runtime_(std::move(runtime)),
      tokenizer_(std::move(tokenizer)),
      special_ids_(special_ids),
      options_(std::move(options)),
      structured_(std::move(structured)) {}

ChatService::~ChatService() = default;

std::vector<MappedWeightFile> ChatService::MappedWeights() const { return runtime_->model().MappedWeights(); }

Result<std::unique_ptr<ChatStream>> ChatService::Start(const ServingRequest& request,
                                                       const ChatStartOptions& options) {
  const EncodedRequestPrompt* prepared = options.prepared;
  const GenerationParams& params = request.generation;
  KIMI_RETURN_IF_ERROR(CheckEngineLimits(params));
  EncodedRequestPrompt prompt;
  if (prepared != nullptr) {
    prompt = *prepared;
  } else {
    KIMI_ASSIGN_OR_RETURN(prompt, RenderRequestPrompt(request));
  }
  KIMI_RETURN_IF_ERROR(TokeniseRequestPrompt(tokenizer_, request.endpoint, &prompt));
  std::vector<int32_t> ids = std::move(prompt.ids);
  const int64_t prompt_tokens = prompt.prompt_tokens;
  const bool chat = request.endpoint == ServingEndpoint::kChatCompletions;
  std::unique_ptr<OutputParser> parser;
  bool starts_in_reasoning = false;
  if (chat) {
    const OutputStart start = ChatFormat::OutputStartFor(request.chat);
    KIMI_ASSIGN_OR_RETURN(parser, OutputParserRegistry::Create(options_.output_parser, {special_ids_, start}));
    starts_in_reasoning = start == OutputStart::kThinkChannel;
  }
  const int64_t context = runtime_->model().config().max_position_embeddings;
  const int64_t room = context - int64_t(ids.size());
  if (room < 1) {
    return Status::InvalidArgument("the prompt has " + std::to_string(ids.size()) +
                                   " tokens; the model's context is " + std::to_string(context));
  }
  GenerationRequest generation;
  generation.prompt = std::move(ids);
  generation.sampling = params.sampling;
  generation.stop = params.stop;
  generation.max_tokens = std::min(params.max_tokens.value_or(options_.default_max_tokens), room);
  generation.priority = options.priority;
  generation.prefix_cache_scope = options.prefix_cache_scope;
  if (chat) {
    KIMI_ASSIGN_OR_RETURN(generation.constraint, structured_->ConstraintFor(request));
  }
  std::unique_ptr<RequestHandle> handle = runtime_->Submit(std::move(generation));
  Tokenizer tokenizer = tokenizer_;
  serving::ChatEventAssembler assembler(
      std::move(parser), [tokenizer](int32_t id) { return tokenizer.IsSpecial(id); }, starts_in_reasoning,
      prompt_tokens);
  if (params.sampling.top_logprobs >= 0) {
    assembler.ReportLogprobs([tokenizer](int32_t id) {
      Result<std::string_view> bytes = tokenizer.TokenBytes(id);
      return bytes.ok() ? std::string(*bytes) : std::string();
    });
  }
  return std::unique_ptr<ChatStream>(new ChatStreamImpl(std::move(handle), std::move(assembler), prompt_tokens));
}

RuntimeCounters ChatService::Counters() const { return runtime_->Counters(); }

}  // namespace kimi
