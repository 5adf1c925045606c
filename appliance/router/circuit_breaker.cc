#include "router/circuit_breaker.h"

namespace kimi::router {

std::string_view BreakerStateName(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed: return "closed";
    case BreakerState::kOpen: return "open";
    case BreakerState::kHalfOpen: return "half_open";
  }
  return "unknown";
}

CircuitBreaker::CircuitBreaker(int failure_threshold, int64_t cooldown_ms)
    : failure_threshold_(failure_threshold < 1 ? 1 : failure_threshold), cooldown_ms_(cooldown_ms) {}

bool CircuitBreaker::TryAcquire(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case BreakerState::kClosed: return true;
    case BreakerState::kOpen:
      if (now_ms - opened_at_ms_ < cooldown_ms_) return false;
      state_ = BreakerState::kHalfOpen;
      probe_in_flight_ = true;
      return true;
    case BreakerState::kHalfOpen:
      if (probe_in_flight_) return false;
      probe_in_flight_ = true;
      return true;
  }
  return false;
}

bool CircuitBreaker::WouldAdmit(int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case BreakerState::kClosed: return true;
    case BreakerState::kOpen: return now_ms - opened_at_ms_ >= cooldown_ms_;
    case BreakerState::kHalfOpen: return !probe_in_flight_;
  }
  return false;
}

void CircuitBreaker::RecordSuccess() {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = BreakerState::kClosed;
  failures_ = 0;
  probe_in_flight_ = false;
}

bool CircuitBreaker::RecordFailure(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  ++failures_;
  bool opens = state_ == BreakerState::kHalfOpen || (state_ == BreakerState::kClosed && failures_ >= failure_threshold_);
  if (opens) {
    state_ = BreakerState::kOpen;
    opened_at_ms_ = now_ms;
  }
  probe_in_flight_ = false;
  return opens;
}

void CircuitBreaker::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  probe_in_flight_ = false;
}

BreakerState CircuitBreaker::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

int CircuitBreaker::consecutive_failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

}  // namespace kimi::router
