#include "api/background_generation.h"

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
    }
    owner_.queue_.push_back(event);
    owner_.cv_.notify_all();
    return true;
  }

 private:
  BackgroundGeneration& owner_;
  const BackendOutcome& outcome_;
};

BackgroundGeneration::BackgroundGeneration(Backend& backend, BackendRequest request) {
  thread_ = std::thread([this, &backend, request = std::move(request)]() mutable { Run(backend, std::move(request)); });
}

BackgroundGeneration::~BackgroundGeneration() {
  Abandon();
  thread_.join();
}

void BackgroundGeneration::Run(Backend& backend, BackendRequest request) {
  BackendOutcome outcome;
  Sink sink(*this, outcome);
  Status result = backend.Generate(request, sink, &outcome);
  std::lock_guard<std::mutex> lock(mu_);
  outcome_ = std::move(outcome);
  ended_ = true;
  result_ = std::move(result);
  cv_.notify_all();
}

BackgroundGeneration::Wait BackgroundGeneration::Next(StreamEvent* event, Status* result,
                                                      std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return !queue_.empty() || ended_; })) return Wait::kTimeout;
  if (!queue_.empty()) {
    *event = std::move(queue_.front());
    queue_.pop_front();
    return Wait::kEvent;
  }
  *result = result_;
  return Wait::kEnded;
}

bool BackgroundGeneration::WaitForFirstEvent(Status* result) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || ended_; });
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
  abandoned_ = true;
}

BackendOutcome BackgroundGeneration::OutcomeAtFirstEvent() {
  std::lock_guard<std::mutex> lock(mu_);
  return first_outcome_;
}

}  // namespace kimi::api
