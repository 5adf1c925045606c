// The inference backend contract and the one internal event stream between backends and the
// response encoders.
//
// Every backend (the embedded engine, an upstream `kimi-engine serve` worker, a vLLM server,
// and the router that chooses among them) turns one typed chat-completions request into a
// sequence of StreamEvents. The SSE encoder and the non-streaming response builder consume only
// StreamEvents, so the OpenAI streaming rules (role frame, reasoning boundary, tool-call
// chunking, usage frames) are written once, whatever the backend delivered and however it
// delivered it (a vLLM `reasoning` field, a tool call sent whole, reasoning and answer text in
// one delta).
//
// Event order for one request:
//   (kReasoning | kAnswer | kToolCallBegin kToolCallArguments* kToolCallEnd)* kFinish
// Text events carry whole UTF-8 characters. A tool call's kToolCallArguments pieces, joined,
// are its arguments JSON text exactly; tool indices start at 0 and rise by one.
// Public header of api/: other folders include it.
// Thread safety: a Backend is shared by all request threads; Generate() may run on many
// threads at once. An EventSink belongs to one request and is called only from the thread
// that called Generate().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/serving_request.h"
#include "kimi/status.h"
#include "kimi/token_logprobs.h"

namespace kimi {
struct EncodedRequestPrompt;  // kimi/request_prompt.h
}  // namespace kimi

namespace kimi::api {

struct TokenUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;  // part of completion_tokens spent in the thinking channel
};

enum class StreamEventKind {
  kReasoning,          // text
  kAnswer,             // text, and logprobs when the request asked for them
  kToolCallBegin,      // tool_index, tool_call_id, tool_name
  kToolCallArguments,  // tool_index, text: the next piece of the arguments JSON text
  kToolCallEnd,        // tool_index
  kFinish,             // finish_reason, usage: always the last event of a successful request
};

struct StreamEvent {
  StreamEventKind kind = StreamEventKind::kAnswer;
  std::string text;
  int tool_index = -1;
  std::string tool_call_id;
  std::string tool_name;
  std::string finish_reason;  // "stop", "length" or "tool_calls"
  // kFinish: the request's usage. Other events: usage.prompt_tokens when the backend knows the
  // prompt's count before it ends (the embedded engine, from its tokenised prompt), else 0.
  TokenUsage usage;
  // kAnswer: the tokens whose text this is (empty unless the request asked for logprobs and
  // the backend reports them).
  std::vector<TokenLogprobs> logprobs;
  // The generated tokens this event accounts for: those produced since the backend's previous
  // event, up to and including the one that released this event (0: the same token as the
  // previous event); -1 when the backend does not count tokens per event.
  int64_t tokens = -1;
};

// Where a backend delivers events. Emit() returns false when the client has gone away: the
// backend must then cancel its generation (freeing its memory) and return Cancelled.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual bool Emit(const StreamEvent& event) = 0;
  // A backend that may wait long between events (a request queued behind others) registers how
  // to cancel its work from another thread, so that a client going away ends the wait at once
  // instead of at the next Emit(). The sink may call `cancel` from any thread until the
  // backend replaces it with nullptr, which it must do before what `cancel` uses is destroyed
  // (CancelWhileRegistered does both). Sinks that never cancel ignore it.
  virtual void SetCanceller(std::function<void()> cancel) { (void)cancel; }
};

// Registers `cancel` with `sink` for its own lifetime.
class CancelWhileRegistered {
 public:
  CancelWhileRegistered(EventSink& sink, std::function<void()> cancel) : sink_(sink) {
    sink_.SetCanceller(std::move(cancel));
  }
  ~CancelWhileRegistered() { sink_.SetCanceller(nullptr); }
  CancelWhileRegistered(const CancelWhileRegistered&) = delete;
  CancelWhileRegistered& operator=(const CancelWhileRegistered&) = delete;

 private:
  EventSink& sink_;
};

enum class Endpoint { kChatCompletions, kCompletions };

struct BackendRequest {
  std::string request_id;        // the daemon's request id, forwarded upstream for tracing
  std::string model;             // the model id the client named
  Endpoint endpoint = Endpoint::kChatCompletions;
  // The typed request (api/request_gate.h), with the policy step's changes: what the embedded
  // engine runs and what the router estimates.
  ServingRequest serving;
  // The body as the request rules accepted and normalised it, kept only for forwarding: an
  // upstream server receives ForwardBody(*this) (api/forward_body.h), this body with the
  // typed fields the policy may change written over it. Null in requests built for tests of
  // the embedded path.
  std::shared_ptr<const nlohmann::ordered_json> validated_body;
  // The workload class the policy step chose ("chat", "agentic"; "" without a policy) and its
  // scheduling priority (lower runs sooner): the embedded engine admits by it, an upstream
  // receives it as vLLM's `priority` when configured to (docs/policies.md).
  std::string workload_class;
  int priority = 0;
  // On whose behalf the request runs, for the prompt prefixes it may reuse from the engine's
  // cache (kimi::PrefixCacheScope): "key:<id>" or "user:<name>"; "" shares with every request
  // that names none. A cache shared across callers would tell one, by its time to first token,
  // what another sent.
  std::string prefix_cache_scope;
  // The prompt as the policy step rendered it (and tokenised it, when it counted its tokens),
  // for the embedded engine to run without rendering or tokenising again
  // (ChatService::Start); null when the step needed no prompt. Other backends ignore it.
  std::shared_ptr<const EncodedRequestPrompt> encoded_prompt;
};

// What the router and /metrics know about a backend after a request.
struct BackendOutcome {
  std::string backend;  // name of the backend that served (or last failed) the request
  int attempts = 0;     // 1 unless the router retried before the first byte
  // The router's choice in one line for the audit record: the candidates with their load,
  // breaker or health, the one chosen, and each retry with the error that caused it. A backend
  // that refuses a request itself, before any server sees it, may say why here, in words that
  // hold none of the request's text; the router adds them to its line.
  std::string decision;
  // The model version that served the request, as the backend that ran it holds it (the
  // embedded engine: the version its engine reference was taken from, at the request's
  // start); empty and 0 when the backend cannot say (an upstream). A backend that knows sets
  // them before its first Emit(), so they are already valid at the first event.
  std::string model_digest;
  int64_t model_version = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // A stable name for metrics, logs and audit records ("embedded", "upstream:worker-1").
  virtual std::string_view name() const = 0;
  // Model ids this backend serves now (empty while not ready).
  virtual std::vector<std::string> Models() const = 0;
  // Ready to take a request for `model`.
  virtual bool Healthy(std::string_view model) const = 0;
  // Why Healthy(model) is false, for the client's 503; "" when the backend has nothing to say
  // beyond the model's readiness.
  virtual std::string UnavailableReason(std::string_view model) const {
    (void)model;
    return "";
  }

  // Runs the request to its end, delivering events to `sink` as they exist. Returns OK after
  // emitting kFinish. An error returned before any event was emitted is answered as an
  // OpenAI error (its Status code picks the HTTP status); after the first event it ends the
  // stream. `outcome` (may be null) says who served it.
  virtual Status Generate(const BackendRequest& request, EventSink& sink, BackendOutcome* outcome) = 0;
};

}  // namespace kimi::api
