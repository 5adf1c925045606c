// The HTTP server: the listening socket, the accept loop, a fixed pool of connection
// workers, and the graceful stop.
//
// Concurrency model: limits.max_connections worker threads, each serving one connection at
// a time with blocking I/O under deadlines (connection.h). The accept loop hands a new
// connection to an idle worker. When every worker has a connection, the new one waits for a
// worker up to limits.worker_wait_ms, and its wait takes a worker back from a connection idle
// between requests (keep-alive; that connection is closed unless a request has started
// arriving on it) or from one whose request is still arriving a second after it began (a head
// or body that trickles in, or a TLS handshake: slowloris; closed, a body answered 408;
// connection.h). A worker also frees itself a moment after its client has gone (it sees the
// close once its response is written), so a client that closes and reconnects at once, and
// stays within max_connections, always gets a worker. A connection still without one at the
// end of its wait, or arriving while max_connections connections already wait, goes to a
// small rejecter thread that answers 503 (OpenAI JSON) and closes, so excess clients learn
// quickly instead of queueing behind slow ones. The workers are shared by client address (an
// IPv4 address, an IPv6 /64): a freed worker goes to the waiting connection whose address holds
// the fewest, workers are taken back from the addresses that hold the most, and a full queue
// gives a waiting place of the address that holds the most to a newcomer from one that holds
// fewer; so one address opening connections as fast as it can keeps no other client out.
// A slow client holds only its own worker, and
// only until its read timeout or until a waiting connection wants it.
//
// Stop(): the accept loop closes the listening socket, idle keep-alive connections are
// closed, requests in flight run to completion (their responses say Connection: close)
// for up to limits.shutdown_grace_ms; then the remaining connections are shut down, and
// Run() returns once every thread has been joined.
//
// With options.tls every connection starts with a TLS handshake, on its worker (or on the
// rejecter, bounded to a second), under the first request's read deadline, using the TLS
// context current when the worker takes the connection (a reload applies to new ones).
// Public header of http/: other folders include it.
// Thread safety: Run() from one thread; Stop() from any thread, any number of times. Not async-signal-safe: call Stop() from a signal-handling thread, not a handler.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "config/listen_address.h"
#include "http/access_log.h"
#include "http/connection.h"
#include "http/dispatcher.h"
#include "http/listener.h"
#include "http/routes.h"
#include "http/tls_reloader.h"

namespace kimi::http {

struct ServerOptions {
  config::LimitsConfig limits;
  // Set: every connection speaks TLS, with the context current when it is accepted
  // (tls_reloader.h). Must outlive the server.
  const TlsReloader* tls = nullptr;
};

class Server {
  class Slot;

 public:
  // Serves on `listener` (bound by the caller, so that a daemon that cannot listen fails
  // before it opens anything else).
  // `routes`: every route served, bound to its services; `services`: what the dispatcher uses
  // around them (Dispatcher).
  Server(ServerOptions options, Listener listener, DispatcherServices services, RouteTable routes,
         metrics::Registry& registry);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // "127.0.0.1:41234": the address actually bound (the kernel's port when 0 was asked).
  const std::string& bound_address() const { return bound_address_; }

  // Serves until Stop(), then drains and returns.
  void Run();
  void Stop();

 private:
  void AcceptLoop();
  void WorkerLoop(Slot& slot);
  void RejecterLoop();
  void Reject(int fd);
  void Drain();
  // Rejects the waiting connections whose wait is over; returns the milliseconds until the
  // next one's ends (-1: none waits).
  int ExpireWaiting();
  // Hands waiting connections to free workers, the connection of the address that holds the
  // fewest first, then asks idle connections for their workers (those of the addresses that
  // hold the most first), one for each waiting connection no reclaim is under way for.
  void AssignWaiting();  // requires mu_
  // A connection accepted while every worker is busy: waits, or takes the place of a waiting
  // connection of an address that holds more, or is refused. Returns the descriptor to refuse
  // (-1: none).
  int Queue(int fd);  // requires mu_
  // The connection is closed or refused: its address holds one fewer.
  void Forget(int fd);  // requires mu_
  size_t HeldBy(const std::string& address) const;  // requires mu_

  ServerOptions options_;
  HttpMetrics metrics_;
  Dispatcher dispatcher_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd; readable once Stop() was called
  std::string bound_address_;
  std::atomic<bool> stopping_{false};

  std::mutex mu_;
  std::condition_variable work_cv_;    // pending_ gained a connection, or exit_
  std::condition_variable drained_cv_;  // assigned_ dropped to 0
  std::deque<int> pending_;             // guarded by mu_: accepted, not yet picked by a worker
  std::set<int> active_fds_;            // guarded by mu_: connections a worker is serving
  // guarded by mu_: connections handed to the pool and not yet closed (pending_ plus
  // active_fds_). Never above the worker count, so every handed-off connection has a worker
  // even when the workers have not reached their wait yet.
  size_t assigned_ = 0;
  bool exit_ = false;                   // guarded by mu_: workers and rejecter leave
  std::deque<int> rejects_;             // guarded by mu_
  std::condition_variable reject_cv_;
  struct Waiting {
    int fd;
    std::chrono::steady_clock::time_point deadline;
    std::string address;
  };
  // guarded by mu_: the client address (an IPv4 address, an IPv6 /64) of every connection
  // accepted and not yet closed, and how many each address holds. One address opening
  // connections as fast as it can must not keep every other client from a worker.
  std::unordered_map<int, std::string> address_of_;
  std::unordered_map<std::string, size_t> held_by_address_;
  // guarded by mu_: accepted while every worker had a connection, oldest first (so in
  // deadline order); at most max_connections.
  std::deque<Waiting> waiting_;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per worker; the vector is set before they start

  std::vector<std::thread> workers_;
  std::thread rejecter_;
};

}  // namespace kimi::http
