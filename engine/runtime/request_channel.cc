// RequestChannel and RequestHandle, its reader side.
#include "runtime/request_channel.h"

#include <string>
#include <utility>

namespace kimi {

void RequestChannel::Push(GenerationEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    if (event.kind == GenerationEvent::Kind::kToken && events_.size() >= kMaxUnreadEvents) {
      event = GenerationEvent();
      event.kind = GenerationEvent::Kind::kError;
      event.error = Status::Cancelled("the output was read too slowly: " + std::to_string(kMaxUnreadEvents) +
                                              " tokens were waiting to be read, so the request was ended");
      cancelled_.store(true, std::memory_order_relaxed);
    }
    closed_ = event.kind != GenerationEvent::Kind::kToken;
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

bool RequestChannel::Next(GenerationEvent* event) {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock, [&] { return !events_.empty() || drained_; });
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  if (closed_ && events_.empty()) drained_ = true;
  return true;
}

bool RequestChannel::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

RequestHandle::RequestHandle(std::shared_ptr<RequestChannel> channel) : channel_(std::move(channel)) {}
RequestHandle::~RequestHandle() {
  if (!channel_->closed()) channel_->Cancel();
}
bool RequestHandle::Next(GenerationEvent* event) { return channel_->Next(event); }
void RequestHandle::Cancel() { channel_->Cancel(); }
uint64_t RequestHandle::id() const { return channel_->id(); }

}  // namespace kimi
