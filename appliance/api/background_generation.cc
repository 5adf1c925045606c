#include "api/background_generation.h"

#include <vector>

#include "api/reused_threads.h"

namespace kimi::api {

// Runs on the generation thread, the one that also writes `outcome`, so reading it here
// needs no lock; the snapshot is published under the owner's.
class BackgroundGeneration::Sink : public EventSink {
 public:
  Sink(BackgroundGeneration& owner, const BackendOutcome& outcome) : owner_(owner), outcome_(outcome) {}
  bool Emit(const StreamEvent& event) override {
    std::lock_guard<std::mutex> lock(owner_.mu_);
    if (owner_.abandoned_) return false;
    if (!owner_.emitted_) {
      owner_.emitted_ = true;
      owner_.first_outcome_ = outcome_;
      owner_.first_prompt_tokens_ = event.usage.prompt_tokens;
    }
    Delivery* delivery = owner_.delivery_;
    if (delivery == nullptr) {
      owner_.queue_.push_back(event);
      owner_.cv_.notify_all();
      return true;
    }
    if (delivery->complete()) return true;  // nothing follows the finish event
    if (!delivery->Deliver(&event, 1)) {
      owner_.client_gone_ = true;
      owner_.abandoned_ = true;  // the backend learns it from this return; no canceller needed
      owner_.cv_.notify_all();
      return false;
    }
    // The request's thread sleeps until the stream needs it: at its end.
    if (delivery->complete()) owner_.cv_.notify_all();
    return true;
  }

  void SetCanceller(std::function<void()> cancel) override {
    std::lock_guard<std::mutex> lock(owner_.mu_);
    owner_.canceller_ = std::move(cancel);
    if (owner_.abandoned_ && owner_.canceller_) owner_.canceller_();  // abandoned before it was known
  }

 private:
  BackgroundGeneration& owner_;
  const BackendOutcome& outcome_;
};

namespace {

// The threads every generation borrows. An idle one is kept long enough to serve the next
// requests of a steady load, and released after a lull. Never destroyed: at exit nothing
// waits for a generation some caller left running; the threads end with the process.
ReusedThreads& GenerationThreads() {
  static ReusedThreads* threads = new ReusedThreads(std::chrono::seconds(30));
  return *threads;
}

}  // namespace

BackgroundGeneration::BackgroundGeneration(Backend& backend, BackendRequest request) {
  GenerationThreads().Run(
      [this, &backend, request = std::move(request)]() mutable { Run(backend, std::move(request)); });
}

BackgroundGeneration::~BackgroundGeneration() {
  std::unique_lock<std::mutex> lock(mu_);
  AbandonLocked();
  cv_.wait(lock, [this] { return ended_; });
}

void BackgroundGeneration::AbandonLocked() {
  if (ended_) return;
  abandoned_ = true;
  if (canceller_) canceller_();
}

void BackgroundGeneration::Run(Backend& backend, BackendRequest request) {
  Status result;
  BackendOutcome outcome;
  {
    Sink sink(*this, outcome);
    result = backend.Generate(request, sink, &outcome);
  }
  // The last touch of this object: once the lock is released the destructor may proceed.
  std::lock_guard<std::mutex> lock(mu_);
  outcome_ = std::move(outcome);
  ended_ = true;
  result_ = std::move(result);
  cv_.notify_all();
}

BackgroundGeneration::Delivered BackgroundGeneration::Deliver(Delivery& delivery, Status* result,
                                                              std::chrono::milliseconds check_interval,
                                                              const std::function<bool()>& client_present) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!queue_.empty() && !delivery.complete()) {
    // Whatever ran ahead of the response's start goes out in one piece.
    std::vector<StreamEvent> queued(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    if (!delivery.Deliver(queued.data(), queued.size())) {
      AbandonLocked();
      return Delivered::kClientGone;
    }
  }
  queue_.clear();
  delivery_ = &delivery;
  for (;;) {
    if (client_gone_) break;
    if (delivery.complete()) {
      delivery_ = nullptr;
      return Delivered::kComplete;
    }
    if (ended_) {
      delivery_ = nullptr;
      *result = result_;
      return Delivered::kEnded;
    }
    if (!cv_.wait_for(lock, check_interval, [&] { return client_gone_ || ended_ || delivery.complete(); }) &&
        !client_present()) {
      break;
    }
  }
  delivery_ = nullptr;
  AbandonLocked();
  return Delivered::kClientGone;
}

bool BackgroundGeneration::WaitForFirstEvent(Status* result, std::chrono::milliseconds check_interval,
                                             const std::function<bool()>& client_present) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, check_interval, [this] { return !queue_.empty() || ended_; })) {
    if (!client_present()) {
      AbandonLocked();
      *result = Status::Cancelled("the client closed the connection before the first event");
      return false;
    }
  }
  if (!queue_.empty()) return true;
  *result = result_;
  return false;
}

bool BackgroundGeneration::WaitOutcome(BackendOutcome* outcome, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return ended_; })) return false;
  *outcome = outcome_;
  return true;
}

void BackgroundGeneration::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  AbandonLocked();
}

BackendOutcome BackgroundGeneration::OutcomeAtFirstEvent() {
  std::lock_guard<std::mutex> lock(mu_);
  return first_outcome_;
}

int64_t BackgroundGeneration::PromptTokensAtFirstEvent() {
  std::lock_guard<std::mutex> lock(mu_);
  return first_prompt_tokens_;
}

}  // namespace kimi::api
