// The daemon's stop and reload signals. SIGINT, SIGTERM and SIGHUP are blocked in every thread
// (BlockStopSignals, before any thread starts) and taken by one watcher thread
// (WatchSignals), so that no handler runs in signal context.
//
// Thread safety: BlockStopSignals() on the main thread before any other starts;
// WatchSignals() on its own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

namespace kimi::http {
class Server;
}

namespace kimi::daemon {

void BlockStopSignals();

// Waits for SIGINT/SIGTERM and asks the server to stop; a second signal ends the process at
// once, and so does a stop still running `force_after` after the first (work that ignores the
// stop, whatever it is, cannot keep the process alive). SIGHUP, until the stop, calls
// `on_hangup` (the TLS reload, the served-bytes check). Returns once `done` is set.
void WatchSignals(http::Server* server, const std::atomic<bool>* done, std::chrono::milliseconds force_after,
                  std::function<void()> on_hangup);

}  // namespace kimi::daemon
