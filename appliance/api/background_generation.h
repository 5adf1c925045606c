// BackgroundGeneration: runs Backend::Generate() on a thread of its own (one reused across
// requests, reused_threads.h), so the HTTP layer can
// wait for the first event (or an error) before it commits to a `text/event-stream` response.
// Until then events are queued. Once the response has started, Deliver() hands the queued
// events, and every later one, to a Delivery (the stream's encoder and writer) as they are
// emitted, on the generation thread itself: no hand-off and no thread wake-up per event.
// When the client goes away (the Delivery says so, or the caller's periodic check does, also
// while the first event is awaited), the generation is abandoned: the canceller the backend
// registered (EventSink::SetCanceller) is called at once, and the backend's next Emit()
// returns false, which cancels the generation (the Backend contract); the destructor abandons
// and joins.
// Public header of api/: other folders include it.
// Owns: the queued events; the generation's thread is borrowed and given back when Generate()
// has returned, which the destructor waits for.
// Thread safety: the public functions and the destructor are called by the request's thread;
// the generation thread only calls the internal sink. A Delivery is called under the
// generation's lock, from one thread at a time (the request's thread for queued events, the
// generation thread for the rest), so it needs no lock of its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "api/backend.h"

namespace kimi::api {

class BackgroundGeneration {
 public:
  // Where the events of a started stream go.
  class Delivery {
   public:
    virtual ~Delivery() = default;
    // Takes `count` events in order; false when the client has gone away.
    virtual bool Deliver(const StreamEvent* events, size_t count) = 0;
    // The response is complete: no further event is wanted.
    virtual bool complete() const = 0;
  };

  // Precondition: `backend` outlives this object.
  BackgroundGeneration(Backend& backend, BackendRequest request);
  ~BackgroundGeneration();
  BackgroundGeneration(const BackgroundGeneration&) = delete;
  BackgroundGeneration& operator=(const BackgroundGeneration&) = delete;

  enum class Delivered { kComplete, kEnded, kClientGone };
  // Delivers the queued events, then every later one as the generation emits it, until the
  // delivery is complete (kComplete), the generation ended first (kEnded, with *result what
  // Generate() returned), or the client went away (kClientGone: the generation is abandoned).
  // Every `check_interval` without an event, `client_present()` is asked under the
  // generation's lock (so it may touch what the delivery touches); false means gone.
  Delivered Deliver(Delivery& delivery, Status* result, std::chrono::milliseconds check_interval,
                    const std::function<bool()>& client_present);
  // Blocks until the first event is queued or the generation ended; true when an event is
  // queued (so the response can be a stream), false with *result set otherwise. Every
  // `check_interval` without an event, `client_present()` is asked; false abandons the
  // generation and returns false with *result Cancelled.
  bool WaitForFirstEvent(Status* result, std::chrono::milliseconds check_interval,
                         const std::function<bool()>& client_present);
  void Abandon();
  // Waits up to `timeout` for Generate() to return; true with *outcome (who served the
  // request, for the audit record) when it did.
  bool WaitOutcome(BackendOutcome* outcome, std::chrono::milliseconds timeout);
  // What the backend had put in its BackendOutcome when it emitted its first event (the
  // model version serving the request, before the response's headers are written).
  // Precondition: WaitForFirstEvent() returned true.
  BackendOutcome OutcomeAtFirstEvent();
  // The prompt's token count the first event carried (StreamEvent::usage), 0 when the backend
  // reports it only at the end. Precondition: WaitForFirstEvent() returned true.
  int64_t PromptTokensAtFirstEvent();

 private:
  class Sink;
  void Run(Backend& backend, BackendRequest request);
  void AbandonLocked();  // requires mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StreamEvent> queue_;  // guarded by mu_
  Delivery* delivery_ = nullptr;   // guarded by mu_; set while Deliver() runs
  bool client_gone_ = false;       // guarded by mu_; the delivery failed on the generation thread
  bool ended_ = false;             // guarded by mu_
  bool abandoned_ = false;         // guarded by mu_
  std::function<void()> canceller_;  // guarded by mu_; the backend's, while it has one
  Status result_;                  // guarded by mu_; valid once ended_
  BackendOutcome outcome_;         // written by the generation thread; read once ended_
  bool emitted_ = false;           // guarded by mu_; the first event has been queued
  BackendOutcome first_outcome_;   // guarded by mu_; the outcome as it was at the first event
  int64_t first_prompt_tokens_ = 0;  // guarded by mu_; usage.prompt_tokens of the first event
};

}  // namespace kimi::api
