// ConnectionPool: idle keep-alive HTTP connections to one upstream, so that a busy gateway
// does not open (and the upstream does not accept) one TCP connection per request. Under a
// burst of concurrent streams a connect per request also meets the upstream's listen backlog:
// cpp-httplib servers listen with a backlog of 5 unless told otherwise, and a SYN dropped
// there costs a one-second retransmit or the connect timeout.
//
// A connection goes back to the pool only after an exchange that ended cleanly (the whole
// response read); anything else (an error, a cancelled stream) closes it. A connection idle
// longer than `max_idle` is closed instead of reused, well before the upstream's own
// keep-alive timeout (5 s in cpp-httplib and uvicorn) could close it under a new request.
// The pool opens nothing itself: when TakeIdle() has none, the caller connects.
//
// Owns: the idle connections. Thread safety: TakeIdle() and Release() may be called from many
// threads; a connection, once taken, belongs to the caller until released or dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kimi::upstream {

template <typename Connection>
class ConnectionPool {
 public:
  using Clock = std::chrono::steady_clock;
  ConnectionPool(size_t max_idle_connections, Clock::duration max_idle)
      : max_idle_connections_(max_idle_connections), max_idle_(max_idle) {}
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // The most recently released idle connection young enough to reuse, else nullptr.
  std::unique_ptr<Connection> TakeIdle() {
    std::vector<Idle> stale;  // closed outside the lock
    std::unique_ptr<Connection> reused;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const Clock::time_point now = Clock::now();
      while (!idle_.empty() && reused == nullptr) {
        Idle last = std::move(idle_.back());
        idle_.pop_back();
        if (now - last.since <= max_idle_) reused = std::move(last.connection);
        else stale.push_back(std::move(last));
      }
      // Older entries sit at the front: whatever is too old there goes too.
      size_t young = 0;
      while (young < idle_.size() && now - idle_[young].since > max_idle_) ++young;
      for (size_t i = 0; i < young; ++i) stale.push_back(std::move(idle_[i]));
      idle_.erase(idle_.begin(), idle_.begin() + static_cast<std::ptrdiff_t>(young));
    }
    return reused;
  }

  // Keeps `connection` for reuse (a pool whose age limit is zero keeps none). Precondition: its
  // last exchange ended cleanly.
  void Release(std::unique_ptr<Connection> connection) {
    if (connection == nullptr || max_idle_ <= Clock::duration::zero()) return;  // closed as it goes out of scope
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() >= max_idle_connections_) return;
    idle_.push_back(Idle{std::move(connection), Clock::now()});
  }

  size_t idle() const {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_.size();
  }

 private:
  struct Idle {
    std::unique_ptr<Connection> connection;
    Clock::time_point since;
  };

  const size_t max_idle_connections_;
  const Clock::duration max_idle_;
  mutable std::mutex mu_;
  std::vector<Idle> idle_;  // guarded by mu_; the most recently released last
};

}  // namespace kimi::upstream
