// ConnectionPool: idle keep-alive HTTP connections to one upstream, so that a busy gateway
// does not open (and the upstream does not accept) one TCP connection per request. Under a
// burst of concurrent streams a connect per request also meets the upstream's listen backlog:
// `kimi-engine serve` and other cpp-httplib servers listen with a backlog of 5, and a SYN
// dropped there costs a one-second retransmit or the connect timeout.
//
// A connection goes back to the pool only after an exchange that ended cleanly (the whole
// response read); anything else (an error, a cancelled stream) closes it. A connection idle
// longer than `max_idle` is closed instead of reused, well before the upstream's own
// keep-alive timeout (5 s in cpp-httplib and uvicorn) could close it under a new request.
//
// Owns: the idle clients. Thread safety: Acquire() and Release() may be called from many
// threads; a client, once acquired, belongs to the caller until released or dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httplib {
class Client;
}

namespace kimi::upstream {

class ConnectionPool {
 public:
  using Clock = std::chrono::steady_clock;
  // `make` builds a new client (with its timeouts) when no idle one is left.
  ConnectionPool(std::function<std::unique_ptr<httplib::Client>()> make, size_t max_idle_connections,
                 Clock::duration max_idle);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // The most recently released idle client young enough to reuse, else a new one.
  std::unique_ptr<httplib::Client> Acquire();
  // Keeps `client` for reuse. Precondition: its last exchange ended cleanly.
  void Release(std::unique_ptr<httplib::Client> client);
  size_t idle() const;

 private:
  struct Idle {
    std::unique_ptr<httplib::Client> client;
    Clock::time_point since;
  };

  const std::function<std::unique_ptr<httplib::Client>()> make_;
  const size_t max_idle_connections_;
  const Clock::duration max_idle_;
  mutable std::mutex mu_;
  std::vector<Idle> idle_;  // guarded by mu_; the most recently released last
};

}  // namespace kimi::upstream
