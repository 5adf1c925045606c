// The event queue between the scheduler thread (producer) and whoever reads a RequestHandle
// (consumer), and the cancel flag going the other way.
//
// Owns: the queued events of one request.
// Thread safety: every method may be called from any thread; Push is called by the scheduler
// only, Next by one reader at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "kimi/runtime.h"

namespace kimi {

class RequestChannel {
 public:
  // Events a reader may leave unread. The scheduler does not wait for readers, so a stream
  // whose client reads slowly (a reader blocked in a socket write it keeps just alive) would
  // queue the request's every token, up to max_tokens of them, for as long as it takes.
  static constexpr size_t kMaxUnreadEvents = 4096;

  explicit RequestChannel(uint64_t id) : id_(id) {}

  uint64_t id() const { return id_; }

  // Queues an event; a kFinish or kError event closes the channel (later pushes are dropped).
  // A token pushed while kMaxUnreadEvents are unread is not queued: the request is cancelled
  // and closed with a kError event (Cancelled, as when its client leaves) after the unread ones.
  void Push(GenerationEvent event);
  // Blocks until an event is queued; false once the closing event has been read.
  bool Next(GenerationEvent* event);

  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  bool closed() const;

 private:
  const uint64_t id_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<GenerationEvent> events_;  // guarded by mu_
  bool closed_ = false;                 // guarded by mu_: the closing event was pushed
  bool drained_ = false;                // guarded by mu_: the closing event was read
};

}  // namespace kimi
