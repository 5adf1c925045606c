// The serving runtime: many concurrent generation requests over one Model, batched
// continuously. A request joins the running batch at any step and leaves it the step it
// finishes or is cancelled; long prompts prefill in chunks that share a per-step token budget
// with the running decodes, and every step is one forward pass over all of its sequences;
// admission is by a memory budget in bytes that covers the MLA page pool and the KDA slots;
// repeated prompt beginnings reuse cached MLA pages and KDA snapshots (docs/runtime.md).
//
// Submit() hands back a RequestHandle: a thread-safe queue of events (a token with its text
// piece as soon as it is sampled, then exactly one final event: finish or error) and Cancel().
//
// Owns: the Model, one scheduler thread, every sequence state. Counters() is a snapshot.
// Thread safety: all Runtime methods may be called from any thread. A RequestHandle may be read
// by one thread while others call Cancel(); events are delivered in order.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/model.h"
#include "kimi/sampler.h"
#include "kimi/status.h"

namespace kimi {

class Tokenizer;

// Text of generated tokens, one stream per request (text pieces never split a character).
class TokenTextStream {
 public:
  virtual ~TokenTextStream() = default;
  virtual Status Push(int32_t id, std::string* text) = 0;
  virtual void Flush(std::string* text) = 0;  // end of stream
};
class Detokenizer {
 public:
  virtual ~Detokenizer() = default;
  virtual std::unique_ptr<TokenTextStream> NewStream() const = 0;
};
// The detokeniser of a loaded tokenizer (StreamDecoder per request).
std::shared_ptr<Detokenizer> TokenizerDetokenizer(const Tokenizer& tokenizer);

// The constrained-decoding hook: before each sampling step, fills `mask` (all allowed on entry)
// from the tokens generated so far. tokens_left counts the tokens the request may still
// generate, this one included (max_tokens - generated.size()), so a constraint can close its
// output before the budget cuts it. Called on the scheduler thread only.
class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  virtual Status FillMask(std::span<const int32_t> generated, int64_t tokens_left, TokenMask* mask) = 0;
};

// What one scheduler step ran, for RuntimeOptions::step_observer: the composition of its
// forward pass and what the step cost. Steps without a forward pass (nothing to run) are not
// reported.
struct StepStats {
  int64_t step = 0;             // RuntimeCounters::steps before this step
  int64_t decode_rows = 0;      // sequences that consumed one sampled token
  int64_t prompt_tokens = 0;    // prompt (or recomputed context) tokens in prefill chunks
  int64_t prompt_pieces = 0;    // prefill chunks, one per sequence at most
  std::chrono::steady_clock::time_point start, end;  // the whole step, admission to clean-up
  double forward_seconds = 0;   // wall time of Model::ForwardBatch within the step
  double cpu_seconds = 0;       // process CPU time (every thread) over the whole step
  int64_t minor_faults = 0;     // process minor page faults over the whole step
};
using StepObserver = std::function<void(const StepStats&)>;

struct RuntimeOptions {
  int max_num_seqs = 32;                 // sequences running at once
  int64_t max_num_batched_tokens = 256;  // tokens per step, decodes (one each) and prefill chunks
  // The latency bound of a step that carries decodes (docs/runtime.md, "Prefill beside
  // decodes"): while any sequence decodes, prefill chunks take at most
  // max(decode_step_token_budget - decodes, decode_step_token_budget / 2) tokens of the step, so
  // a prompt arriving beside running decodes lengthens their inter-token gaps by a bounded
  // amount instead of by a whole max_num_batched_tokens pass. Steps without decodes keep the
  // full max_num_batched_tokens, and when more prompts than decodes can finish whole in the
  // step (a burst of requests joining a few running streams), it takes them whole. 0 turns the
  // bound off. 16 makes a step beside 16 decodes cheaper (1.4 pure decode steps against 1.9)
  // but, measured on the load benchmark, doubled the p99 time to first token without lowering
  // the p99 inter-token latency, so the default stays 32 (docs/runtime.md, "Prefill beside
  // decodes").
  int64_t decode_step_token_budget = 32;
  uint64_t memory_budget_bytes = uint64_t(1) << 30;  // sequence state (KDA slots + MLA pages)
  std::vector<int32_t> stop_token_ids;   // end-of-message / EOS ids that end every request
  std::shared_ptr<Detokenizer> detokenizer;  // null: no text, stop strings unused
  // Prefix caching (docs/runtime.md): MLA pages and KDA snapshots of prompt beginnings kept
  // within memory_budget_bytes and reused by later requests that start with the same tokens.
  bool prefix_caching = true;
  // Called on the scheduler thread after every step that ran a forward pass (off when empty; a
  // set observer costs a few clock reads and one getrusage per step). It must be quick and must
  // not call back into the Runtime.
  StepObserver step_observer;
};

// The most stop strings one request may carry, and the longest: the scheduler thread checks
// every one after every token of the request, so their work per token is bounded by these.
// (The API's per-model bounds, docs/api.md, are at most these.)
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopStringBytes = 1024;

struct GenerationRequest {
  std::vector<int32_t> prompt;    // at least one token
  SamplingParams sampling;
  std::vector<std::string> stop;  // stop strings, removed from the output (kMaxStopStrings)
  std::vector<int32_t> stop_token_ids;  // in addition to RuntimeOptions::stop_token_ids
  int64_t max_tokens = 256;       // >= 1
  std::shared_ptr<TokenConstraint> constraint;  // optional
  // Admission order among waiting requests: a lower value is admitted first (vLLM's
  // convention); equal values keep arrival order. The appliance gives the workload class with
  // the tighter inter-token latency target the lower value (docs/policies.md).
  int priority = 0;
  // Whose cached prompt prefixes this request may reuse, and under which its own are cached:
  // only those of requests with the same scope (the appliance gives each API key its own).
  uint64_t prefix_cache_scope = 0;
};

enum class FinishReason { kStop, kLength, kCancelled };
std::string_view FinishReasonName(FinishReason reason);  // "stop", "length", "cancelled"

// The prefix-cache scope of requests made on behalf of `name` (an API key's id): distinct names
// give distinct scopes (a collision is a 2^-64 chance, and its tokens are still compared); ""
// gives 0, the scope of requests that name none.
uint64_t PrefixCacheScope(std::string_view name);

struct RequestStats {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;        // a stop token id counts, its (absent) text does not
  double queue_seconds = 0;             // submit -> admitted into the running batch
  double time_to_first_token_seconds = 0;  // submit -> first token sampled
  std::vector<double> inter_token_seconds;  // between consecutive tokens
  // When Submit queued the request: the origin of the times above, so that a token's time can
  // be set beside StepStats' step times.
  std::chrono::steady_clock::time_point submitted;
};

struct GenerationEvent {
  enum class Kind { kToken, kFinish, kError };
  Kind kind = Kind::kToken;
  // kToken: the sampled id and the text it released (may be empty: held back or stopped).
  int32_t token = -1;
  std::string text;
  SampledToken sampled;  // id, and logprobs when asked for
  // kFinish
  FinishReason finish_reason = FinishReason::kStop;
  RequestStats stats;
  // kError: why the request could not run (nothing is emitted after it).
  Status error;
};

// A latency histogram in the shape /metrics exports (Prometheus): counts per bucket with upper
// bounds in seconds (the last bucket, +Inf, has no bound), their sum and count.
struct LatencyHistogram {
  static constexpr double kUpperBounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1.0,   2.5,  5.0,   10.0, 30.0, 60.0};
  static constexpr size_t kBuckets = std::size(kUpperBounds) + 1;
  int64_t counts[kBuckets] = {};  // counts[i]: observations in (bound[i-1], bound[i]]; not cumulative
  double sum_seconds = 0;
  int64_t count = 0;
  void Observe(double seconds);
};

struct RuntimeCounters {
  int64_t running = 0;
  int64_t waiting = 0;
  uint64_t memory_budget_bytes = 0;
  uint64_t memory_reserved_bytes = 0;  // KDA slots and own pages reserved by running sequences
  uint64_t memory_used_bytes = 0;      // what their states hold now
  int64_t tokens_generated = 0;
  int64_t prompt_tokens_processed = 0;
  int64_t requests_finished = 0;
  int64_t requests_cancelled = 0;
  int64_t requests_refused = 0;        // need larger than the whole budget, or invalid
  int64_t preemptions = 0;             // sequences whose state was freed to give a decode a page
  int64_t steps = 0;

  // Memory by kind. The budget covers the MLA page pool and the KDA slots: running sequences
  // reserve their worst case, the prefix cache holds the rest.
  uint64_t mla_page_bytes = 0;         // one page id: page_tokens tokens of every MLA layer
  int64_t mla_page_tokens = 0;
  int64_t mla_pages_capacity = 0;      // pages the pool can hand out (budget / page bytes)
  int64_t mla_pages_used = 0;          // pages of running sequences and of the prefix cache
  uint64_t kda_slot_bytes = 0;         // one sequence's KDA recurrent + conv state
  int64_t kda_slots_used = 0;          // one per running sequence

  // Prefix cache. Hit rate over prompt tokens = prefix_cache_hit_tokens / prefix_cache_query_tokens.
  int64_t prefix_cache_queries = 0;    // admitted requests looked up
  int64_t prefix_cache_hits = 0;       // of them, served a cached prefix
  int64_t prefix_cache_query_tokens = 0;
  int64_t prefix_cache_hit_tokens = 0;
  uint64_t prefix_cache_bytes = 0;     // pages and KDA snapshots it holds
  int64_t prefix_cache_pages = 0;
  int64_t prefix_cache_snapshots = 0;
  int64_t prefix_cache_evictions = 0;

  // Latency of every finished or running request, for /metrics histograms.
  LatencyHistogram queue_time;           // submit -> admitted
  LatencyHistogram time_to_first_token;  // submit -> first token sampled
  LatencyHistogram inter_token;          // between consecutive tokens of a request
  LatencyHistogram end_to_end;           // submit -> finished (stop or length; not cancelled)
};

class RequestChannel;

class RequestHandle {
 public:
  explicit RequestHandle(std::shared_ptr<RequestChannel> channel);
  ~RequestHandle();  // cancels the request if it has not ended
  RequestHandle(const RequestHandle&) = delete;
  RequestHandle& operator=(const RequestHandle&) = delete;

  // Blocks for the next event. Returns false once the final event has been read.
  bool Next(GenerationEvent* event);
  // Asks the scheduler to drop the request; it ends with finish_reason kCancelled at the next step.
  void Cancel();
  uint64_t id() const;

 private:
  std::shared_ptr<RequestChannel> channel_;
};

class Runtime {
 public:
  // Starts the scheduler thread. Errors: InvalidArgument for options out of range.
  static Result<std::unique_ptr<Runtime>> Create(std::unique_ptr<Model> model, RuntimeOptions options);
  ~Runtime();  // cancels what is left, joins the thread
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Queues a request. An invalid or oversized request is not refused here: its handle gets one
  // kError event, so callers have a single path.
  std::unique_ptr<RequestHandle> Submit(GenerationRequest request);

  RuntimeCounters Counters() const;
  const Model& model() const;
  // Worst-case bytes of state a request of this many tokens (prompt + max_tokens) holds.
  uint64_t StateBytesFor(int64_t total_tokens) const;

  class Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kimi
