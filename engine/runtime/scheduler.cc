// Scheduler::Step: admit, one forward pass for every decode and the prefill chunks that fit
// the step's token budget, sample, emit, free. The order inside a step does not change any sequence's tokens: each state sees its own
// tokens in its own order, whatever else shares the pass.
#include "runtime/scheduler.h"

#include <sys/resource.h>

#include <algorithm>
#include <utility>

#include "core/machine_limits.h"

namespace kimi::runtime {

namespace {
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

int64_t ProcessMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t(usage.ru_minflt);
}
}  // namespace

StateSizer::StateSizer(const Model& model) {
  const auto probe = model.NewSequence();
  fixed_bytes_ = PrefixCache::SnapshotBytes(probe->kda);
  if (!probe->mla.empty()) {
    page_tokens_ = probe->mla[0].page_tokens;
    page_bytes_ = uint64_t(probe->mla.size()) *
                  (uint64_t(page_tokens_ * probe->mla[0].row_width) * sizeof(float) + sizeof(int32_t));
  }
}

namespace {

int64_t PoolCapacity(const StateSizer& sizer, uint64_t budget) {
  return sizer.page_bytes() == 0 ? 0 : int64_t(budget / sizer.page_bytes());
}

}  // namespace

Scheduler::Scheduler(Model& model, const RuntimeOptions& options)
    : model_(model),
      options_(options),
      vocab_size_(model.config().vocab_size),
      sizer_(model),
      pool_(*model.NewSequence(), PoolCapacity(sizer_, options.memory_budget_bytes)),
      cache_(pool_) {
  counters_.memory_budget_bytes = options.memory_budget_bytes;
  counters_.mla_page_bytes = pool_.page_bytes();
  counters_.mla_page_tokens = pool_.page_tokens();
  counters_.mla_pages_capacity = pool_.capacity();
  counters_.kda_slot_bytes = sizer_.fixed_bytes();
}

void Scheduler::Enqueue(WaitingRequest request) {
  auto seq = std::make_unique<Sequence>();
  seq->channel = std::move(request.channel);
  seq->request = std::move(request.request);
  seq->sampler.emplace(seq->request.sampling, vocab_size_, next_seed_++);
  if (options_.detokenizer) seq->text = options_.detokenizer->NewStream();
  seq->stop.emplace(seq->request.stop);
  seq->submitted = request.submitted;
  seq->stats.submitted = request.submitted;
  seq->stats.prompt_tokens = int64_t(seq->request.prompt.size());
  // Behind every waiting request of the same or a lower priority value, ahead of the rest;
  // preempted sequences keep the head whatever their priority, so their state is rebuilt first.
  auto position = std::find_if(waiting_.begin(), waiting_.end(), [&](const std::unique_ptr<Sequence>& w) {
    return !w->admitted_before && w->request.priority > seq->request.priority;
  });
  waiting_.insert(position, std::move(seq));
}

void Scheduler::Step() {
  const bool observed = static_cast<bool>(options_.step_observer);
  double cpu_start = 0;
  int64_t faults_start = 0;
  if (observed) {
    step_stats_ = StepStats{};
    step_stats_.step = counters_.steps;
    step_stats_.start = Clock::now();
    cpu_start = ProcessCpuSeconds();
    faults_start = ProcessMinorFaults();
  }
  DropCancelled();
  Admit();
  RunBatch();
  RequeuePreempted();
  RemoveDone();
  ++counters_.steps;
  if (observed && step_stats_.decode_rows + step_stats_.prompt_pieces > 0) {
    step_stats_.end = Clock::now();
    step_stats_.cpu_seconds = ProcessCpuSeconds() - cpu_start;
    step_stats_.minor_faults = ProcessMinorFaults() - faults_start;
    options_.step_observer(step_stats_);
  }
}

void Scheduler::CancelAll() {
  for (auto& w : waiting_) w->channel->Cancel();
  for (auto& s : running_) s->channel->Cancel();
  DropCancelled();
  RemoveDone();
}

void Scheduler::DropCancelled() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Sequence& seq = **it;
    if (!seq.channel->cancelled()) {
      ++it;
      continue;
    }
    if (!seq.admitted_before) seq.stats.queue_seconds = Seconds(Clock::now() - seq.submitted);
    Finish(seq, FinishReason::kCancelled);
    it = waiting_.erase(it);
  }
  for (auto& seq : running_) {
    if (!seq->done && seq->channel->cancelled()) Finish(*seq, FinishReason::kCancelled);
  }
  RemoveDone();
}

void Scheduler::Admit() {
  // Priority order (Enqueue), then first come, first served: a request that does not fit yet blocks those behind it, so a
  // large request is not starved by a stream of small ones (and a preempted one, at the head,
  // comes back first). Admission reserves the KDA slot and the pages of the context and of the
  // first decode; later pages are reserved as decodes need them (EnsurePages). The prefix cache
  // gives way (LRU) to a request that needs its memory.
  while (!waiting_.empty() && int64_t(running_.size()) < options_.max_num_seqs) {
    Sequence& head = *waiting_.front();
    head.context = head.request.prompt;
    if (!head.generated.empty()) {  // recompute after a preemption: all but the last generated token
      head.context.insert(head.context.end(), head.generated.begin(), head.generated.end() - 1);
    }
    const int64_t context_tokens = int64_t(head.context.size());
    PrefixHit hit;
    if (options_.prefix_caching && pool_.capacity() > 0) hit = cache_.Lookup(head.request.prefix_cache_scope, head.context);
    const int64_t own_pages = sizer_.PagesFor(context_tokens + 1) - int64_t(hit.pages.size());
    const uint64_t need = sizer_.fixed_bytes() + uint64_t(own_pages) * sizer_.page_bytes();
    if (!Fits(need)) {
      for (int32_t page : hit.pages) pool_.Release(page);
      break;
    }
    if (options_.prefix_caching) cache_.Record(hit, context_tokens);
    std::unique_ptr<Sequence> seq = std::move(waiting_.front());
    waiting_.pop_front();
    seq->state = model_.NewSequence();
    pool_.Attach(*seq->state);
    for (int32_t page : hit.pages) PagePool::Append(*seq->state, page);
    seq->prefilled = 0;
    seq->next_input = -1;
    if (hit.kda) {
      seq->state->kda = *hit.kda;
      seq->state->length = hit.tokens;
      seq->prefilled = hit.tokens;
    }
    seq->page_quota = own_pages;
    seq->borrowed_pages = int64_t(hit.pages.size());
    seq->reserved_bytes = need;
    counters_.memory_reserved_bytes += need;
    if (!seq->admitted_before) {
      seq->admitted_before = true;
      seq->stats.queue_seconds = Seconds(Clock::now() - seq->submitted);
      counters_.queue_time.Observe(seq->stats.queue_seconds);
    }
    running_.push_back(std::move(seq));
  }
}

bool Scheduler::Fits(uint64_t bytes) {
  const uint64_t budget = options_.memory_budget_bytes;
  const uint64_t reserved = counters_.memory_reserved_bytes;
  return reserved + bytes <= budget && cache_.EvictTo(budget - reserved - bytes);
}

bool Scheduler::EnsurePages(Sequence& seq, int64_t tokens, bool may_preempt) {
  SequenceState& state = *seq.state;
  if (state.mla.empty()) return true;
  const int64_t needed = sizer_.PagesFor(state.length + tokens);
  while (int64_t(state.mla[0].block_table.size()) < needed) {
    const int64_t own = int64_t(state.mla[0].block_table.size()) - seq.borrowed_pages;
    if (own >= seq.page_quota) {
      // Beyond its quota: the budget must give one more page, or the newest sequences give
      // theirs back. The oldest sequence always gets its page (Submit refused any request
      // whose worst case exceeds the whole budget), so every request ends.
      while (!Fits(sizer_.page_bytes())) {
        if (!may_preempt) return false;
        Sequence* victim = nullptr;
        for (auto it = running_.rbegin(); it != running_.rend() && victim == nullptr; ++it) {
          if (!(*it)->done && !(*it)->preempted) victim = it->get();
        }
        Preempt(*victim);  // `seq` itself is a candidate, so there is one
        if (victim == &seq) return false;
      }
      ++seq.page_quota;
      seq.reserved_bytes += sizer_.page_bytes();
      counters_.memory_reserved_bytes += sizer_.page_bytes();
    }
    const auto page = pool_.Allocate();
    if (!page) {  // ruled out: the pool holds the whole budget in pages
      Fail(seq, Status::ResourceExhausted("the MLA page pool (" + std::to_string(pool_.capacity()) +
                                          " pages) is exhausted"));
      return false;
    }
    PagePool::Append(state, *page);
  }
  return true;
}

void Scheduler::Preempt(Sequence& seq) {
  pool_.ReleaseAll(*seq.state);
  seq.state.reset();
  counters_.memory_reserved_bytes -= seq.reserved_bytes;
  seq.reserved_bytes = 0;
  seq.page_quota = 0;
  seq.borrowed_pages = 0;
  seq.preempted = true;
  ++counters_.preemptions;
}

void Scheduler::RequeuePreempted() {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    if (!(*it)->preempted) continue;
    (*it)->preempted = false;
    waiting_.push_front(std::move(*it));  // the earliest admitted ends up first
  }
  std::erase(running_, nullptr);
}

void Scheduler::CachePrefix(Sequence& seq) {
  const int64_t page_tokens = pool_.page_tokens();
  if (!options_.prefix_caching || seq.prefilled == 0 || seq.prefilled % page_tokens != 0) return;
  // The snapshot is new memory; the pages only move from the sequence's reservation to the cache.
  const bool room = Fits(sizer_.fixed_bytes());
  const int64_t moved = cache_.Insert(seq.request.prefix_cache_scope, seq.context, seq.prefilled, *seq.state, room);
  const uint64_t moved_bytes = uint64_t(moved) * sizer_.page_bytes();
  seq.page_quota -= moved;
  seq.borrowed_pages += moved;
  seq.reserved_bytes -= moved_bytes;
  counters_.memory_reserved_bytes -= moved_bytes;
}

int64_t PrefillBudget(int64_t decodes, const RuntimeOptions& options) {
  const int64_t bound = options.decode_step_token_budget;
  if (decodes == 0 || bound <= 0) return options.max_num_batched_tokens;
  return std::max(bound - decodes, bound / 2);
}

int64_t StepPrefillTokens(int64_t decodes, std::span<const int64_t> remaining, const RuntimeOptions& options) {
  const int64_t room = options.max_num_batched_tokens - decodes;
  const int64_t bounded = std::min(room, PrefillBudget(decodes, options));
  // The prompts that can finish whole in this step, in admission order. When they outnumber the
  // decodes, one longer gap for each decode buys a first token for more streams than it delays,
  // and they all decode from the next step on instead of joining one a step beside them.
  int64_t whole = 0, finishing = 0;
  for (const int64_t r : remaining) {
    if (whole + r > room) break;
    whole += r;
    ++finishing;
  }
  return finishing > decodes ? std::max(whole, bounded) : bounded;
}

void Scheduler::RunBatch() {
  // Decodes first (one token each), then prefill chunks in admission order with what is left of
  // the step's token budget, bounded by PrefillBudget while there are decodes; all of them go
  // through one forward pass.
  std::vector<Sequence*> members;
  std::vector<BatchInput> inputs;
  int64_t budget = options_.max_num_batched_tokens;
  for (auto& seq : running_) {
    if (seq->done || seq->preempted || seq->next_input < 0 || !EnsurePages(*seq, 1, /*may_preempt=*/true)) continue;
    members.push_back(seq.get());
    inputs.push_back({seq->state.get(), std::span<const int32_t>(&seq->next_input, 1), true});
    --budget;
  }
  auto prefilling = [](const Sequence& seq) {
    return !seq.done && !seq.preempted && seq.next_input < 0 && seq.prefilled < int64_t(seq.context.size());
  };
  std::vector<int64_t> remaining;
  for (auto& seq : running_) {
    if (prefilling(*seq)) remaining.push_back(int64_t(seq->context.size()) - seq->prefilled);
  }
  budget = std::min(budget, StepPrefillTokens(int64_t(inputs.size()), remaining, options_));
  const int64_t page_tokens = pool_.page_tokens();
  for (auto& seq : running_) {
    if (budget <= 0) break;
    const int64_t context = int64_t(seq->context.size());
    if (!prefilling(*seq)) continue;
    int64_t end = seq->prefilled + std::min(context - seq->prefilled, budget);
    // With prefix caching a chunk that crosses a page boundary stops at the last one it
    // crosses, so the KDA state can be snapshotted there.
    const int64_t boundary = end / page_tokens * page_tokens;
    if (options_.prefix_caching && boundary > seq->prefilled && boundary < end) end = boundary;
    const int64_t chunk = end - seq->prefilled;
    // Within the quota reserved at admission; preempting here could take a sequence that is
    // already in this step's batch.
    if (!EnsurePages(*seq, chunk, /*may_preempt=*/false)) continue;
    const auto piece = std::span<const int32_t>(seq->context).subspan(size_t(seq->prefilled), size_t(chunk));
    members.push_back(seq.get());
    // A recomputed context ends before the last generated token, whose logits were sampled.
    inputs.push_back({seq->state.get(), piece, end == context && seq->generated.empty()});
    budget -= chunk;
  }
  if (inputs.empty()) return;
  for (size_t i = 0; i < members.size(); ++i) {
    const bool decode = members[i]->next_input >= 0;
    step_stats_.decode_rows += decode ? 1 : 0;
    step_stats_.prompt_pieces += decode ? 0 : 1;
    step_stats_.prompt_tokens += decode ? 0 : int64_t(inputs[i].tokens.size());
  }
  const auto forward_start = Clock::now();
  const Status status = model_.ForwardBatch(inputs, &logits_);
  step_stats_.forward_seconds = Seconds(Clock::now() - forward_start);
  size_t row = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    Sequence& seq = *members[i];
    if (!status.ok()) {
      Fail(seq, status.WithContext(seq.next_input < 0 ? "prefill" : "decode"));
      continue;
    }
    if (seq.next_input < 0) {
      seq.prefilled += int64_t(inputs[i].tokens.size());
      counters_.prompt_tokens_processed += int64_t(inputs[i].tokens.size());
      CachePrefix(seq);
      if (seq.prefilled == int64_t(seq.context.size()) && !seq.generated.empty()) {
        seq.next_input = seq.generated.back();  // recomputed: decoding resumes
      }
    }
    if (!inputs[i].want_logits) continue;
    Advance(seq, std::span<const float>(logits_).subspan(row++ * size_t(vocab_size_), size_t(vocab_size_)));
  }
}

void Scheduler::Advance(Sequence& seq, std::span<const float> logits) {
  std::optional<TokenMask> mask;
  if (seq.request.constraint) {
    mask.emplace(vocab_size_, /*allow_all=*/true);
    const Status status = seq.request.constraint->FillMask(
        seq.generated, seq.request.max_tokens - int64_t(seq.generated.size()), &*mask);
    // The constraint's errors say what they concern (and may start with the request field).
    if (!status.ok()) return Fail(seq, status);
  }
  auto sampled = seq.sampler->Sample(logits, mask ? &*mask : nullptr);
  if (!sampled.ok()) return Fail(seq, sampled.status());

  const auto now = Clock::now();
  if (seq.generated.empty()) {
    seq.stats.time_to_first_token_seconds = Seconds(now - seq.submitted);
    counters_.time_to_first_token.Observe(seq.stats.time_to_first_token_seconds);
  } else {
    seq.stats.inter_token_seconds.push_back(Seconds(now - seq.last_token));
    counters_.inter_token.Observe(seq.stats.inter_token_seconds.back());
  }
  seq.last_token = now;
  const int32_t id = sampled->id;
  seq.generated.push_back(id);
  seq.stats.completion_tokens = int64_t(seq.generated.size());
  ++counters_.tokens_generated;

  auto is_stop_id = [id](const std::vector<int32_t>& ids) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  const bool stop_token = is_stop_id(options_.stop_token_ids) || is_stop_id(seq.request.stop_token_ids);
  std::optional<FinishReason> finish;
  GenerationEvent event;
  event.token = id;
  if (seq.text && !stop_token) {
    std::string raw;
    const Status status = seq.text->Push(id, &raw);
    if (!status.ok()) return Fail(seq, status.WithContext("detokenise"));
    if (seq.stop->Push(raw, &event.text)) finish = FinishReason::kStop;
  }
  if (!finish && stop_token) finish = FinishReason::kStop;
  if (!finish && int64_t(seq.generated.size()) >= seq.request.max_tokens) finish = FinishReason::kLength;
  if (finish && seq.text && !seq.stop->stopped()) {
    std::string raw;
    seq.text->Flush(&raw);
    seq.stop->Push(raw, &event.text);
    seq.stop->Flush(&event.text);
  }
  event.sampled = std::move(sampled).value();
  seq.channel->Push(std::move(event));
  if (finish) {
    Finish(seq, *finish);
  } else {
    seq.next_input = id;
  }
}

void Scheduler::Finish(Sequence& seq, FinishReason reason) {
  GenerationEvent event;
  event.kind = GenerationEvent::Kind::kFinish;
  event.finish_reason = reason;
  event.stats = seq.stats;
  seq.channel->Push(std::move(event));
  seq.done = true;
  if (reason != FinishReason::kCancelled) counters_.end_to_end.Observe(Seconds(Clock::now() - seq.submitted));
  ++(reason == FinishReason::kCancelled ? counters_.requests_cancelled : counters_.requests_finished);
}

void Scheduler::Fail(Sequence& seq, Status status) {
  GenerationEvent event;
  event.kind = GenerationEvent::Kind::kError;
  event.error = std::move(status);
  seq.channel->Push(std::move(event));
  seq.done = true;
}

void Scheduler::RemoveDone() {
  std::erase_if(running_, [&](const std::unique_ptr<Sequence>& seq) {
    if (!seq->done) return false;
    counters_.memory_reserved_bytes -= seq->reserved_bytes;
    pool_.ReleaseAll(*seq->state);  // its own pages are free now; cached ones stay in the cache
    return true;                    // the state is freed with the sequence, within this step
  });
  PublishCounters();
}

void Scheduler::PublishCounters() {
  counters_.running = int64_t(running_.size());
  counters_.waiting = int64_t(waiting_.size());
  counters_.memory_used_bytes = 0;
  for (const auto& seq : running_) counters_.memory_used_bytes += seq->state->Bytes();
  counters_.mla_pages_used = pool_.in_use();
  counters_.kda_slots_used = int64_t(running_.size());
  const PrefixCacheStats& c = cache_.stats();
  counters_.prefix_cache_queries = c.queries;
  counters_.prefix_cache_hits = c.hits;
  counters_.prefix_cache_query_tokens = c.query_tokens;
  counters_.prefix_cache_hit_tokens = c.hit_tokens;
  counters_.prefix_cache_bytes = c.bytes;
  counters_.prefix_cache_pages = c.pages;
  counters_.prefix_cache_snapshots = c.snapshots;
  counters_.prefix_cache_evictions = c.evictions;
}

}  // namespace kimi::runtime
