#include "daemon/signals.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>

#include "http/server.h"
#include "kimi/log.h"

namespace kimi::daemon {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void WatchSignals(http::Server* server, const std::atomic<bool>* done, std::chrono::milliseconds force_after,
                  std::function<void()> on_hangup) {
  sigset_t set = StopSignals();
  int received = 0;
  std::chrono::steady_clock::time_point force_at;
  while (!done->load()) {
    if (received > 0 && std::chrono::steady_clock::now() >= force_at) {
      log::Error("the stop did not finish within the shutdown grace period; exiting without waiting",
                 {{"waited_ms", static_cast<int64_t>(force_after.count())}});
      std::_Exit(1);
    }
    timespec tick{0, 200'000'000};
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig < 0) continue;
    if (sig == SIGHUP) {
      if (received == 0 && on_hangup) on_hangup();
      continue;
    }
    if (++received == 1) {
      log::Info("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      force_at = std::chrono::steady_clock::now() + force_after;
      server->Stop();
    } else {
      log::Warn("second signal during shutdown; exiting without waiting");
      std::_Exit(1);
    }
  }
}

}  // namespace kimi::daemon
