#include "api/background_generation.h"

namespace kimi::api {

class BackgroundGeneration::Sink : public EventSink {
 public:
  explicit Sink(BackgroundGeneration& owner) : owner_(owner) {}
  bool Emit(const StreamEvent& event) override {
    std::lock_guard<std::mutex> lock(owner_.mu_);
    if (owner_.abandoned_) return false;
    if (!owner_.first_emitted_) {
      owner_.first_emitted_ = true;
      owner_.outcome_ = owner_.running_outcome_;  // this thread writes running_outcome_
    }
    owner_.queue_.push_back(event);
    owner_.cv_.notify_all();
    return true;
  }

 private:
  BackgroundGeneration& owner_;
};

BackgroundGeneration::BackgroundGeneration(Backend& backend, BackendRequest request) {
  thread_ = std::thread([this, &backend, request = std::move(request)]() mutable { Run(backend, std::move(request)); });
}

BackgroundGeneration::~BackgroundGeneration() {
  Abandon();
  thread_.join();
}

void BackgroundGeneration::Run(Backend& backend, BackendRequest request) {
  Sink sink(*this);
  Status result = backend.Generate(request, sink, &running_outcome_);
  std::lock_guard<std::mutex> lock(mu_);
  outcome_ = running_outcome_;
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

BackendOutcome BackgroundGeneration::outcome() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outcome_;
}

void BackgroundGeneration::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
}

}  // namespace kimi::api
