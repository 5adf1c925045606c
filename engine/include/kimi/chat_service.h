// ChatService: the engine as a chat-completions service. One typed request in
// (kimi/serving_request.h), a stream of typed output events out: the path shared by the
// appliance's embedded backend and `kimi-engine serve`.
//
// A request's prompt is rendered (RenderRequestPrompt: the K3 chat format for chat, the
// prompt text for completions) and tokenised (TokeniseRequestPrompt) once. A caller that
// needed the prompt before submitting (the appliance's policy step checks the rendered text
// and counts its tokens) hands what it made to Start(), which then renders and tokenises only
// what is missing. Start() then builds the token constraint of a structured answer
// (response_format json_schema / json_object, tool_choice "required"), submits to the
// Runtime, and starts the model's OutputParser where the prompt left the model
// (ChatFormat::OutputStartFor). For /v1/completions the prompt text is tokenised without
// special tokens and the output is answer text. Every error that Start() returns happens
// before generation; once a ChatStream exists, its events carry the rest (a runtime refusal
// arrives as the first event, kError).
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

#include "kimi/chat_format.h"
#include "kimi/model.h"
#include "kimi/output_parser.h"
#include "kimi/request_prompt.h"
#include "kimi/runtime.h"
#include "kimi/serving_request.h"
#include "kimi/status.h"
#include "kimi/token_logprobs.h"
#include "kimi/tokenizer.h"

namespace kimi {

namespace serving {
class StructuredRequests;
}  // namespace serving

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

// How one request is run besides what it asks.
struct ChatStartOptions {
  int priority = 0;                 // the runtime's admission priority (GenerationRequest::priority)
  uint64_t prefix_cache_scope = 0;  // GenerationRequest::prefix_cache_scope
  // RenderRequestPrompt(request), maybe tokenised, made by the caller before submitting; it must
  // be this request's prompt. Its ids are used when this service's tokenizer made them. May be
  // null.
  const EncodedRequestPrompt* prepared = nullptr;
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

  // Errors (nothing was submitted): InvalidArgument naming the request field at fault.
  Result<std::unique_ptr<ChatStream>> Start(const ServingRequest& request, const ChatStartOptions& options = {});

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
