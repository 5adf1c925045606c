// The continuous-batching scheduler: one Step() admits waiting requests (reusing cached prompt
// prefixes), runs one forward pass (Model::ForwardBatch) for every decoding sequence and the
// prefill chunks within the step's token budget, samples, emits events, and frees the state of
// every sequence that finished or was cancelled. While sequences decode, the prefill a step
// carries is bounded (RuntimeOptions::decode_step_token_budget), so their inter-token gaps stay
// short when prompts arrive. When a decode needs a page that the memory
// budget cannot give, the most recently admitted sequence is preempted: its state is freed and
// it goes back to the head of the waiting queue, to recompute its tokens when readmitted.
// Waiting requests are admitted by GenerationRequest::priority (lower first), then in arrival
// order.
//
// Owns: the waiting queue, the running sequences and their states, the MLA page pool, the
// prefix cache, the counters.
// Thread safety: none; the runtime calls it from its scheduler thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kimi/runtime.h"
#include "runtime/page_pool.h"
#include "runtime/prefix_cache.h"
#include "runtime/request_channel.h"
#include "runtime/stop_matcher.h"

namespace kimi::runtime {

using Clock = std::chrono::steady_clock;

// A request as the runtime hands it over.
struct WaitingRequest {
  std::shared_ptr<RequestChannel> channel;
  GenerationRequest request;
  Clock::time_point submitted;
};

// One request from enqueueing to its end. While waiting (or preempted) it has no state; what it
// has generated, its sampler (RNG), text stream and stop matcher survive a preemption.
struct Sequence {
  std::shared_ptr<RequestChannel> channel;
  GenerationRequest request;
  std::unique_ptr<SequenceState> state;  // null while waiting
  std::optional<Sampler> sampler;
  std::unique_ptr<TokenTextStream> text;
  std::optional<StopMatcher> stop;
  std::vector<int32_t> generated;
  // What the state must consume before decoding: the prompt, or after a preemption the prompt
  // and every generated token but the last (which the next decode consumes).
  std::vector<int32_t> context;
  int64_t prefilled = 0;     // context tokens consumed
  int32_t next_input = -1;   // the sampled token the next decode consumes; -1 while prefilling
  // Memory (docs/runtime.md): the KDA slot and page_quota pages of its own are reserved in the
  // budget; borrowed_pages of its block table are the prefix cache's (counted there).
  int64_t page_quota = 0;
  int64_t borrowed_pages = 0;
  uint64_t reserved_bytes = 0;
  bool admitted_before = false;
  Clock::time_point submitted, last_token;
  RequestStats stats;
  bool done = false;
  bool preempted = false;    // state freed this step; back to the waiting queue after it
};

// Worst-case state bytes of a sequence, from the sizes a fresh state of the model exposes.
class StateSizer {
 public:
  explicit StateSizer(const Model& model);
  uint64_t BytesFor(int64_t tokens) const { return fixed_bytes_ + uint64_t(PagesFor(tokens)) * page_bytes_; }
  int64_t PagesFor(int64_t tokens) const { return (std::max<int64_t>(tokens, 0) + page_tokens_ - 1) / page_tokens_; }
  uint64_t fixed_bytes() const { return fixed_bytes_; }
  uint64_t page_bytes() const { return page_bytes_; }

 private:
  uint64_t fixed_bytes_ = 0;   // KDA recurrent and conv state: independent of length
  int64_t page_tokens_ = 1;
  uint64_t page_bytes_ = 0;    // one page of every MLA layer, with its block-table entries
};

// The prefill tokens a step may take beside `decodes` decoding sequences: all of
// max_num_batched_tokens without decodes; with them, what decode_step_token_budget leaves after
// the decodes, but at least half of it, so prompts progress however many sequences decode.
int64_t PrefillBudget(int64_t decodes, const RuntimeOptions& options);

// The prompt tokens one step takes beside `decodes` decoding sequences, given what is left of
// each prefilling sequence's context (`remaining`, admission order): PrefillBudget within what
// max_num_batched_tokens leaves after the decodes; but when more prompts than decodes can
// finish whole within that room, the step takes them whole (docs/runtime.md, "Prefill beside
// decodes").
int64_t StepPrefillTokens(int64_t decodes, std::span<const int64_t> remaining, const RuntimeOptions& options);

class Scheduler {
 public:
  Scheduler(Model& model, const RuntimeOptions& options);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Enqueue(WaitingRequest request);
  bool HasWork() const { return !waiting_.empty() || !running_.empty(); }
  void Step();
  // Ends every request (finish kCancelled); used at shutdown.
  void CancelAll();

  const RuntimeCounters& counters() const { return counters_; }

 private:
  void DropCancelled();
  void Admit();
  // Gives `seq` pool pages for `tokens` more tokens. Pages beyond its quota are reserved from
  // the budget (evicting the prefix cache), and, if `may_preempt`, by preempting the most
  // recently admitted sequences, possibly `seq` itself. False if `seq` got no pages (it waits,
  // or was preempted).
  bool EnsurePages(Sequence& seq, int64_t tokens, bool may_preempt);
  // Whether `bytes` more fit in the budget, evicting the prefix cache if needed.
  bool Fits(uint64_t bytes);
  void Preempt(Sequence& seq);
  // Moves this step's preempted sequences to the head of the waiting queue, in admission order.
  void RequeuePreempted();
  // After a prefill chunk that ended on a page boundary: hands its pages to the prefix cache.
  void CachePrefix(Sequence& seq);
  // One Model::ForwardBatch over the decodes and the prefill chunks within the token budget.
  void RunBatch();
  // Samples from one row of logits and emits the token (and the finish, if it ends here).
  void Advance(Sequence& seq, std::span<const float> logits);
  void Finish(Sequence& seq, FinishReason reason);
  void Fail(Sequence& seq, Status status);
  void RemoveDone();
  void PublishCounters();

  Model& model_;
  const RuntimeOptions& options_;
  const int64_t vocab_size_;
  const StateSizer sizer_;
  PagePool pool_;       // before cache_ and running_: both hold its pages
  PrefixCache cache_;
  uint64_t next_seed_ = 0x9e3779b97f4a7c15ull;
  std::deque<std::unique_ptr<Sequence>> waiting_;  // preempted ones at the head
  std::vector<std::unique_ptr<Sequence>> running_;  // in admission order
  std::vector<float> logits_;
  RuntimeCounters counters_;
  StepStats step_stats_;  // this step's, filled while RunBatch builds the batch
};

}  // namespace kimi::runtime
