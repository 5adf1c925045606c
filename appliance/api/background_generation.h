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
  // Waits up to `timeout` for Generate() to return; true with *outcome (who served the
  // request, for the audit record) when it did.
  bool WaitOutcome(BackendOutcome* outcome, std::chrono::milliseconds timeout);
  // What the backend had put in its BackendOutcome when it emitted its first event (the
  // model version serving the request, before the response's headers are written).
  // Precondition: WaitForFirstEvent() returned true.
  BackendOutcome OutcomeAtFirstEvent();

 private:
  class Sink;
  void Run(Backend& backend, BackendRequest request);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StreamEvent> queue_;  // guarded by mu_
  bool ended_ = false;             // guarded by mu_
  bool abandoned_ = false;         // guarded by mu_
  Status result_;                  // guarded by mu_; valid once ended_
  BackendOutcome outcome_;         // written by the generation thread; read once ended_
  bool emitted_ = false;           // guarded by mu_; the first event has been queued
  BackendOutcome first_outcome_;   // guarded by mu_; the outcome as it was at the first event
  std::thread thread_;
};

}  // namespace kimi::api
