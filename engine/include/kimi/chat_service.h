// ChatService: the engine as a chat-completions service. One request body in, a stream of
// typed output events out: the path shared by the appliance's embedded backend and
// `kimi-engine serve`.
//
// Start() does, in order: read the chat fields of the body (ParseChatRequest), render the K3
// prompt (ChatFormat::Render), tokenise it (EncodePrompt), read the sampling fields
// (GenerationParamsFromBody), build the token constraint of a structured answer
// (response_format json_schema / json_object, tool_choice "required"), submit to the Runtime, and start the model's OutputParser
// where the prompt left the model (ChatFormat::OutputStartFor). For /v1/completions the
// body's `prompt` text is tokenised without special tokens and the output is answer text.
// Every error that Start() returns happens before generation; once a ChatStream exists,
// its events carry the rest (a runtime refusal arrives as the first event, kError).
//
// Owns: the Runtime (and through it the Model), the Tokenizer. A ChatStream owns its
// runtime request: destroying it, or Cancel(), drops the sequence and frees its memory.
// Thread safety: ChatService methods may be called from any thread. A ChatStream is read by
// one thread; Cancel() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/chat_format.h"
#include "kimi/model.h"
#include "kimi/output_parser.h"
#include "kimi/runtime.h"
#include "kimi/status.h"
#include "kimi/token_logprobs.h"
#include "kimi/tokenizer.h"

namespace kimi {

namespace serving {
class StructuredRequests;
}  // namespace serving

enum class ServingEndpoint { kChatCompletions, kCompletions };

// The prompt of a request body as the engine runs it: a chat body rendered in the K3 format
// (ChatFormat::Render) and tokenised (EncodePrompt); a completions body's `prompt` text
// tokenised without special tokens.
struct EncodedRequestPrompt {
  std::vector<int32_t> ids;       // what the runtime runs (chat: with the generation stub)
  int64_t prompt_tokens = 0;      // what usage.prompt_tokens reports
  std::optional<ChatRequest> chat;  // the parsed chat request (chat endpoint only)
  // What the ids were made from, so that they can be reused for the same prompt only: the
  // tokenizer (Tokenizer::id) and the rendered prompt (completions: the prompt text alone).
  uint64_t tokenizer_id = 0;
  RenderedPrompt rendered;
};
// `counted` (may be null): ids encoded earlier for this request (CountPromptTokens). They are
// reused, not encoded again, when the same tokenizer made them from the same rendered prompt
// (text, markup and stub); otherwise they are ignored. Either way the result is what encoding
// would give. Errors: InvalidArgument naming the body field at fault; the tokenizer's errors.
Result<EncodedRequestPrompt> EncodeRequestPrompt(const Tokenizer& tokenizer, const nlohmann::ordered_json& body,
                                                 ServingEndpoint endpoint,
                                                 const EncodedRequestPrompt* counted = nullptr);

// The number of prompt tokens a request will report as usage.prompt_tokens, computed by the
// same path as ChatService::Start (EncodeRequestPrompt), for checks made before a request is
// submitted (the appliance's policy step). When the rendered prompt has at most
// `bound_enough` bytes it cannot have more tokens than bytes (every token covers at least one
// byte), so the byte count is returned as an upper bound (exact == false) without tokenising.
struct PromptTokenCount {
  int64_t tokens = 0;
  bool exact = true;  // false: `tokens` is an upper bound of at most bound_enough
  // An exact count's ids, for ChatService::Start to run without encoding the prompt again
  // (its `chat` is not kept); null for an upper bound.
  std::shared_ptr<const EncodedRequestPrompt> encoded;
};
Result<PromptTokenCount> CountPromptTokens(const Tokenizer& tokenizer, const nlohmann::ordered_json& body,
                                           ServingEndpoint endpoint, int64_t bound_enough = -1);

struct ChatUsage {
  int64_t prompt_tokens = 0;      // the rendered prompt without the generation stub
  int64_t completion_tokens = 0;  // every sampled token, the end-of-message token included
  int64_t reasoning_tokens = 0;   // the part of completion_tokens spent in the thinking channel
};

struct ChatEvent {
  enum class Kind {
    kOutput,  // output: reasoning, answer or a tool-call piece, in the order produced
    kFinish,  // finish_reason ("stop", "length", "tool_calls"), usage: the last event
    kError,   // error: the request could not run (the last event)
  };
  Kind kind = Kind::kOutput;
  OutputEvent output;
  // kOutput answer text, when the request asked for logprobs: the tokens that produced it.
  std::vector<TokenLogprobs> logprobs;
  std::string finish_reason;
  ChatUsage usage;
  Status error;
  // The sampled tokens this event accounts for: those read since the previous event, up to
  // and including the one that released it; 0 when an earlier event already counted the
  // token that released this one (a token may release several events).
  int64_t tokens = 0;
};

class ChatStream {
 public:
  virtual ~ChatStream() = default;
  // Blocks for the next event. Returns false once the final event (kFinish or kError, or the
  // end of a cancelled request) has been read.
  virtual bool Next(ChatEvent* event) = 0;
  // Stops generation; Next() then ends without a kFinish event.
  virtual void Cancel() = 0;
  virtual int64_t prompt_tokens() const = 0;
};

struct ChatServiceOptions {
  ModelOptions model;
  // stop_token_ids and detokenizer are set by the service (end of message and EOS).
  RuntimeOptions runtime;
  std::string output_parser = "kimi_k3";
  // max_tokens when the body names none; always capped by the model's context length.
  int64_t default_max_tokens = 2048;
};

class ChatService {
 public:
  // Loads model_dir's weights (Model::Load) and its tokenizer (Tokenizer::LoadDirectory) and
  // starts a Runtime. Errors: the loaders' errors; NotFound for an unknown output parser;
  // FailedPrecondition when the tokenizer's vocabulary does not fit the model. Builds the
  // vocabulary trie structured answers are constrained with, once.
  static Result<std::unique_ptr<ChatService>> Open(const std::string& model_dir, ChatServiceOptions options);
  // Over an already loaded model and tokenizer.
  static Result<std::unique_ptr<ChatService>> Create(std::unique_ptr<Model> model, Tokenizer tokenizer,
                                                     ChatServiceOptions options);
  ~ChatService();
  ChatService(const ChatService&) = delete;
  ChatService& operator=(const ChatService&) = delete;

  // Errors (nothing was submitted): InvalidArgument naming the body field at fault.
  // `priority`: the runtime's admission priority (GenerationRequest::priority). `counted`
  // (may be null): the ids CountPromptTokens made of this body, so that a request counted
  // before it was submitted is tokenised once (EncodeRequestPrompt says when they are used).
  Result<std::unique_ptr<ChatStream>> Start(const nlohmann::ordered_json& body, ServingEndpoint endpoint,
                                            int priority = 0, const EncodedRequestPrompt* counted = nullptr);

  RuntimeCounters Counters() const;
  // The model's weight files as it reads them in place (Model::MappedWeights); valid while
  // the service lives.
  std::vector<MappedWeightFile> MappedWeights() const;
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const SpecialTokenIds& special_ids() const { return special_ids_; }

 private:
  ChatService(std::unique_ptr<Runtime> runtime, Tokenizer tokenizer, SpecialTokenIds special_ids,
              ChatServiceOptions options, std::unique_ptr<serving::StructuredRequests> structured);

  std::unique_ptr<Runtime> runtime_;
  Tokenizer tokenizer_;
  SpecialTokenIds special_ids_;
  ChatServiceOptions options_;
  std::unique_ptr<serving::StructuredRequests> structured_;
};

}  // namespace kimi
