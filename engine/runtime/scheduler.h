// The continuous-batching scheduler: one Step() admits waiting requests (reusing cached prompt
// prefixes), runs one forward pass (Model::ForwardBatch) for every decoding sequence and the
// prefill chunks within the step's token budget, samples, emits events, and frees the state of
// every sequence that finished or was cancelled.
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
#include <vector>

#include "kimi/runtime.h"
#include "runtime/page_pool.h"
#include "runtime/prefix_cache.h"
#include "runtime/request_channel.h"
#include "runtime/stop_matcher.h"

namespace kimi::runtime {

using Clock = std::chrono::steady_clock;

struct WaitingRequest {
  std::shared_ptr<RequestChannel> channel;
  GenerationRequest request;
  Clock::time_point submitted;
  uint64_t need_bytes = 0;  // worst-case state, reserved at admission
};

struct Sequence {
  std::shared_ptr<RequestChannel> channel;
  GenerationRequest request;
  std::unique_ptr<SequenceState> state;
  std::optional<Sampler> sampler;
  std::unique_ptr<TokenTextStream> text;
  std::optional<StopMatcher> stop;
  std::vector<int32_t> generated;
  int64_t prefilled = 0;     // prompt tokens consumed
  int32_t next_input = -1;   // the sampled token the next decode consumes; -1 while prefilling
  uint64_t reserved_bytes = 0;  // KDA slot + the MLA pages it may still need of its own
  Clock::time_point submitted, last_token;
  RequestStats stats;
  bool done = false;
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
  // Gives `seq` pool pages for `tokens` more tokens; false (and the sequence failed) if the
  // pool is out of pages, which the reservations rule out.
  bool EnsurePages(Sequence& seq, int64_t tokens);
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
  // Bytes the budget has committed: running reservations and the prefix cache.
  uint64_t Committed() const { return counters_.memory_reserved_bytes + cache_.bytes(); }

  Model& model_;
  const RuntimeOptions& options_;
  const int64_t vocab_size_;
  const StateSizer sizer_;
  PagePool pool_;       // before cache_ and running_: both hold its pages
  PrefixCache cache_;
  uint64_t next_seed_ = 0x9e3779b97f4a7c15ull;
  std::deque<WaitingRequest> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // in admission order
  std::vector<float> logits_;
  RuntimeCounters counters_;
};

}  // namespace kimi::runtime
