// CircuitBreaker: keeps requests away from a backend that keeps failing, and lets one probe
// through after a cool-down to find out whether it recovered.
//
//   closed    --(failure_threshold consecutive failures)-->  open
//   open      --(cooldown_ms passed; the next TryAcquire)-->  half-open (one probe admitted)
//   half-open --(probe succeeds)--> closed;  --(probe fails)--> open (a new cool-down)
//
// A failure is the backend's fault (unreachable, 5xx, timed out, stream cut). A request the
// client abandoned says nothing about the backend: Release() gives a probe's slot back
// without a verdict. Time comes from the caller (milliseconds on a monotonic clock), so
// tests drive it without sleeping.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>

namespace kimi::router {

enum class BreakerState { kClosed = 0, kOpen = 1, kHalfOpen = 2 };
std::string_view BreakerStateName(BreakerState state);

class CircuitBreaker {
 public:
  CircuitBreaker(int failure_threshold, int64_t cooldown_ms);

  // Whether a request may go to the backend now; in half-open, admits one probe at a time.
  // A true answer must be followed by exactly one of RecordSuccess/RecordFailure/Release.
  bool TryAcquire(int64_t now_ms);
  // Whether TryAcquire would admit a request now, without taking the probe slot.
  bool WouldAdmit(int64_t now_ms) const;
  void RecordSuccess();
  // Returns true when this failure opened the breaker.
  bool RecordFailure(int64_t now_ms);
  void Release();

  BreakerState state() const;
  int consecutive_failures() const;

 private:
  const int failure_threshold_;
  const int64_t cooldown_ms_;
  mutable std::mutex mu_;
  BreakerState state_ = BreakerState::kClosed;  // guarded by mu_
  int failures_ = 0;                            // guarded by mu_
  int64_t opened_at_ms_ = 0;                    // guarded by mu_
  bool probe_in_flight_ = false;                // guarded by mu_
};

}  // namespace kimi::router
