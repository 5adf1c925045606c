// Runtime: request validation, the hand-off queue to the scheduler thread, and counters.
#include "kimi/runtime.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/float_mode.h"
#include "kimi/tokenizer.h"
#include "runtime/request_channel.h"
#include "runtime/scheduler.h"

namespace kimi {

using runtime::Clock;

uint64_t PrefixCacheScope(std::string_view name) {
  if (name.empty()) return 0;
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, then a finaliser so that near names spread
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash == 0 ? 1 : hash;
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "unknown";
}

void LatencyHistogram::Observe(double seconds) {
  size_t bucket = 0;
  while (bucket < std::size(kUpperBounds) && seconds > kUpperBounds[bucket]) ++bucket;
  ++counts[bucket];
  sum_seconds += seconds;
  ++count;
}

namespace {

class TokenizerTextStream : public TokenTextStream {
 public:
  explicit TokenizerTextStream(const Tokenizer& tokenizer) : decoder_(tokenizer) {}
  Status Push(int32_t id, std::string* text) override { return decoder_.Push(id, text); }
  void Flush(std::string* text) override { decoder_.Flush(text); }

 private:
  StreamDecoder decoder_;
};

class TokenizerDetokenizerImpl : public Detokenizer {
 public:
  explicit TokenizerDetokenizerImpl(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::unique_ptr<TokenTextStream> NewStream() const override {
    return std::make_unique<TokenizerTextStream>(tokenizer_);
  }

 private:
  Tokenizer tokenizer_;
};

}  // namespace

std::shared_ptr<Detokenizer> TokenizerDetokenizer(const Tokenizer& tokenizer) {
  return std::make_shared<TokenizerDetokenizerImpl>(tokenizer);
}

class Runtime::Impl {
 public:
  Impl(std::unique_ptr<Model> model, RuntimeOptions options)
      : model_(std::move(model)), options_(std::move(options)), sizer_(*model_), scheduler_(*model_, options_) {
    snapshot_.memory_budget_bytes = options_.memory_budget_bytes;
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  std::unique_ptr<RequestHandle> Submit(GenerationRequest request) {
    auto channel = std::make_shared<RequestChannel>(next_id_.fetch_add(1));
    auto handle = std::make_unique<RequestHandle>(channel);
    const int64_t total = int64_t(request.prompt.size()) + request.max_tokens;
    Status invalid = Validate(request);
    const uint64_t need = invalid.ok() ? sizer_.BytesFor(total) : 0;
    if (invalid.ok() && need > options_.memory_budget_bytes) {
      invalid = Status::ResourceExhausted(
          "request needs " + std::to_string(need) + " bytes of sequence state (" + std::to_string(total) +
          " tokens: prompt + max_tokens), more than the runtime's whole memory budget of " +
          std::to_string(options_.memory_budget_bytes) + " bytes; shorten the prompt or lower max_tokens");
    }
    if (!invalid.ok()) {
      GenerationEvent event;
      event.kind = GenerationEvent::Kind::kError;
      event.error = std::move(invalid);
      channel->Push(std::move(event));
      std::lock_guard<std::mutex> lock(mu_);
      ++refused_;
      ++snapshot_.requests_refused;
      return handle;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      incoming_.push_back({std::move(channel), std::move(request), Clock::now()});
      ++snapshot_.waiting;
    }
    wake_.notify_all();
    return handle;
  }

  RuntimeCounters Counters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshot_;
  }

  const Model& model() const { return *model_; }
  uint64_t StateBytesFor(int64_t tokens) const { return sizer_.BytesFor(tokens); }

 private:
  Status Validate(const GenerationRequest& request) const {
    if (request.prompt.empty()) return Status::InvalidArgument("the prompt has no tokens");
    const int64_t vocab = model_->config().vocab_size;
    for (int32_t id : request.prompt) {
      if (id < 0 || id >= vocab) {
        return Status::InvalidArgument("prompt token " + std::to_string(id) + " is outside the vocabulary of " +
                                       std::to_string(vocab));
      }
    }
    if (request.max_tokens < 1) return Status::InvalidArgument("max_tokens must be >= 1");
    return request.sampling.Validate();
  }

  void Loop() {
    // Sampling and the other work of this thread outside a forward pass (which sets its pool's
    // mode itself) flush subnormals like the kernels do.
    SetThreadSubnormals(Subnormals::kFlushToZero);
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        // Cancellation of a request that is waiting needs no wake-up of its own: a waiting
        // request is work, so the loop is already stepping.
        wake_.wait(lock, [&] { return stopping_ || !incoming_.empty() || scheduler_.HasWork(); });
        if (stopping_) break;
        while (!incoming_.empty()) {
          scheduler_.Enqueue(std::move(incoming_.front()));
          incoming_.pop_front();
        }
      }
      scheduler_.Step();
      Publish();
    }
    std::deque<runtime::WaitingRequest> left;
    {
      std::lock_guard<std::mutex> lock(mu_);
      left.swap(incoming_);
    }
    for (auto& w : left) scheduler_.Enqueue(std::move(w));
    scheduler_.CancelAll();
    Publish();
  }

  void Publish() {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_ = scheduler_.counters();
    snapshot_.waiting += int64_t(incoming_.size());
    snapshot_.requests_refused += refused_;
  }

  std::unique_ptr<Model> model_;
  const RuntimeOptions options_;
  const runtime::StateSizer sizer_;
  runtime::Scheduler scheduler_;  // scheduler thread only
  std::atomic<uint64_t> next_id_{1};

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<runtime::WaitingRequest> incoming_;  // guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  int64_t refused_ = 0;                           // guarded by mu_
  RuntimeCounters snapshot_;                      // guarded by mu_
  std::thread thread_;                            // last: starts once everything above exists
};

Result<std::unique_ptr<Runtime>> Runtime::Create(std::unique_ptr<Model> model, RuntimeOptions options) {
  if (model == nullptr) return Status::InvalidArgument("Runtime needs a model");
  if (options.max_num_seqs < 1) return Status::InvalidArgument("max_num_seqs must be >= 1");
  if (options.max_num_batched_tokens < options.max_num_seqs) {
    return Status::InvalidArgument("max_num_batched_tokens must be >= max_num_seqs (every running decode takes one)");
  }
  if (options.decode_step_token_budget < 0) return Status::InvalidArgument("decode_step_token_budget must be >= 0");
  if (options.memory_budget_bytes == 0) return Status::InvalidArgument("memory_budget_bytes must be > 0");
  const int64_t vocab = model->config().vocab_size;
  for (int32_t id : options.stop_token_ids) {
    if (id < 0 || id >= vocab) return Status::InvalidArgument("stop token id " + std::to_string(id) + " is outside the vocabulary");
  }
  return std::unique_ptr<Runtime>(new Runtime(std::make_unique<Impl>(std::move(model), std::move(options))));
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;
std::unique_ptr<RequestHandle> Runtime::Submit(GenerationRequest request) { return impl_->Submit(std::move(request)); }
RuntimeCounters Runtime::Counters() const { return impl_->Counters(); }
const Model& Runtime::model() const { return impl_->model(); }
uint64_t Runtime::StateBytesFor(int64_t total_tokens) const { return impl_->StateBytesFor(total_tokens); }

}  // namespace kimi
