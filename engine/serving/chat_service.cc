#include "kimi/chat_service.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "kimi/chat_format.h"
#include "chat/prompt_work_count.h"
#include "kimi/prompt_encoding.h"
#include "serving/chat_event_assembler.h"
#include "serving/generation_params.h"
#include "serving/structured_request.h"
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

bool SameRendering(const RenderedPrompt& a, const RenderedPrompt& b) {
  if (a.generation_stub_size != b.generation_stub_size || a.markup.size() != b.markup.size()) return false;
  for (size_t i = 0; i < a.markup.size(); ++i) {
    if (a.markup[i].offset != b.markup[i].offset || a.markup[i].size != b.markup[i].size) return false;
  }
  return a.text == b.text;
}

// The prompt of a body, parsed and rendered, without its ids yet.
Result<EncodedRequestPrompt> RenderRequestPrompt(const Tokenizer& tokenizer, const Json& body,
                                                 ServingEndpoint endpoint) {
  EncodedRequestPrompt out;
  out.tokenizer_id = tokenizer.id();
  if (endpoint == ServingEndpoint::kChatCompletions) {
    KIMI_ASSIGN_OR_RETURN(ChatRequest request, ParseChatRequest(body));
    KIMI_ASSIGN_OR_RETURN(out.rendered, ChatFormat::Render(request));
    out.chat = std::move(request);
  } else {
    KIMI_ASSIGN_OR_RETURN(out.rendered.text, CompletionPrompt(body));
  }
  return out;
}

// Fills prompt->ids and prompt_tokens: counted's when they are for the same prompt, else encoded.
Status EncodeRenderedPrompt(const Tokenizer& tokenizer, ServingEndpoint endpoint, const EncodedRequestPrompt* counted,
                            EncodedRequestPrompt* prompt) {
  if (counted != nullptr && counted->tokenizer_id == prompt->tokenizer_id &&
      SameRendering(counted->rendered, prompt->rendered)) {
    prompt->ids = counted->ids;
    prompt->prompt_tokens = counted->prompt_tokens;
    return Status::OK();
  }
  chat::CountPromptTokenization();
  if (endpoint == ServingEndpoint::kChatCompletions) {
    KIMI_ASSIGN_OR_RETURN(PromptIds encoded, EncodePrompt(tokenizer, prompt->rendered));
    prompt->ids = std::move(encoded.ids);
    prompt->prompt_tokens = int64_t(encoded.prompt_tokens);
    return Status::OK();
  }
  KIMI_ASSIGN_OR_RETURN(prompt->ids, tokenizer.Encode(prompt->rendered.text, /*allow_special=*/false));
  if (prompt->ids.empty()) return Status::InvalidArgument("prompt must not be empty");
  prompt->prompt_tokens = int64_t(prompt->ids.size());
  return Status::OK();
}

}  // namespace

Result<EncodedRequestPrompt> EncodeRequestPrompt(const Tokenizer& tokenizer, const Json& body,
                                                 ServingEndpoint endpoint, const EncodedRequestPrompt* counted) {
  KIMI_ASSIGN_OR_RETURN(EncodedRequestPrompt prompt, RenderRequestPrompt(tokenizer, body, endpoint));
  KIMI_RETURN_IF_ERROR(EncodeRenderedPrompt(tokenizer, endpoint, counted, &prompt));
  return prompt;
}

Result<PromptTokenCount> CountPromptTokens(const Tokenizer& tokenizer, const Json& body, ServingEndpoint endpoint,
                                           int64_t bound_enough) {
  KIMI_ASSIGN_OR_RETURN(EncodedRequestPrompt prompt, RenderRequestPrompt(tokenizer, body, endpoint));
  // The bytes the counted tokens cover: the rendered prompt without its generation stub.
  const auto bytes = int64_t(prompt.rendered.text_without_stub().size());
  if (bound_enough >= 0 && bytes <= bound_enough) return PromptTokenCount{bytes, false, nullptr};
  KIMI_RETURN_IF_ERROR(EncodeRenderedPrompt(tokenizer, endpoint, nullptr, &prompt));
  prompt.chat.reset();  // Start parses the body again; only the ids and what they came from are kept
  const int64_t tokens = prompt.prompt_tokens;
  return PromptTokenCount{tokens, true, std::make_shared<const EncodedRequestPrompt>(std::move(prompt))};
}

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

Result<std::unique_ptr<ChatStream>> ChatService::Start(const Json& body, ServingEndpoint endpoint, int priority,
                                                       const EncodedRequestPrompt* counted) {
  KIMI_ASSIGN_OR_RETURN(serving::GenerationParams params, serving::GenerationParamsFromBody(body));
  KIMI_ASSIGN_OR_RETURN(EncodedRequestPrompt prompt, EncodeRequestPrompt(tokenizer_, body, endpoint, counted));
  std::vector<int32_t> ids = std::move(prompt.ids);
  const int64_t prompt_tokens = prompt.prompt_tokens;
  const std::optional<ChatRequest>& chat = prompt.chat;
  std::unique_ptr<OutputParser> parser;
  bool starts_in_reasoning = false;
  if (chat) {
    const OutputStart start = ChatFormat::OutputStartFor(*chat);
    KIMI_ASSIGN_OR_RETURN(parser, OutputParserRegistry::Create(options_.output_parser, {special_ids_, start}));
    starts_in_reasoning = start == OutputStart::kThinkChannel;
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
  request.priority = priority;
  if (chat) {
    KIMI_ASSIGN_OR_RETURN(request.constraint, structured_->ConstraintFor(body, *chat));
  }
  std::unique_ptr<RequestHandle> handle = runtime_->Submit(std::move(request));
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
