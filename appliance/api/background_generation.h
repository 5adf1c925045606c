// BackgroundGeneration: runs Backend::Generate() on a thread of its own and queues its
// events, so the HTTP layer can wait for the first event (or an error) before it commits to
// a `text/event-stream` response, then drain the rest as the connection allows. When the
// client goes away, Abandon() makes the backend's next Emit() return false, which cancels
// the generation (the Backend contract); the destructor abandons and joins.
//
// Owns: the generation thread and the queued events.
// Thread safety: Next(), Abandon() and the destructor are called by the request's thread;
// the generation thread only calls the internal sink.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "api/backend.h"

namespace kimi::api {

class BackgroundGeneration {
 public:
  // Precondition: `backend` outlives this object.
  BackgroundGeneration(Backend& backend, BackendRequest request);
  ~BackgroundGeneration();
  BackgroundGeneration(const BackgroundGeneration&) = delete;
  BackgroundGeneration& operator=(const BackgroundGeneration&) = delete;

  enum class Wait { kEvent, kEnded, kTimeout };
  // kEvent: *event is the next one. kEnded: nothing is left; *result is what Generate()
  // returned. kTimeout: nothing arrived within `timeout` (the caller may check its client).
  Wait Next(StreamEvent* event, Status* result, std::chrono::milliseconds timeout);
  // Blocks until the first event is queued or the generation ended; true when an event is
  // queued (so the response can be a stream), false with *result set otherwise.
  bool WaitForFirstEvent(Status* result);
  void Abandon();
  // Who serves the request (BackendOutcome): as of the first event while the generation
  // runs, final once it ended.
  BackendOutcome outcome() const;

 private:
  class Sink;
  void Run(Backend& backend, BackendRequest request);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StreamEvent> queue_;  // guarded by mu_
  bool ended_ = false;             // guarded by mu_
  bool abandoned_ = false;         // guarded by mu_
  Status result_;                  // guarded by mu_; valid once ended_
  BackendOutcome outcome_;         // guarded by mu_: a copy of running_outcome_
  BackendOutcome running_outcome_; // the generation thread's, written by the backend
  bool first_emitted_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace kimi::api
