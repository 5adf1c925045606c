// IntegrityMonitor: re-hashes the served model version's bytes (served_bytes.h) on a
// background thread, so a change to a verified weight file is found while the model serves.
//
// A pass runs right after Watch() (the bytes the engine has just mapped, closing the window
// between verification and load), then every `interval`, and whenever CheckNow() asks
// (SIGHUP). With `watch_writes`, an inotify watch on every file of the version also starts a
// pass over that file, unpaced, as soon as any process writes to, truncates, replaces or
// removes it (a write through another process's shared mapping raises no event; the
// periodic pass finds it). The
// first failure is reported once through on_failure and the version is no longer checked
// (the caller takes it out of service); Watch() a new version to start again.
//
// Passes are paced (bytes_per_second) and the thread runs at a lower CPU priority (nice
// +10), so serving keeps the cores and the memory bandwidth it needs.
// Public header of models/: other folders include it.
// Owns: the thread, the inotify descriptor and the watched target (which keeps its engine's
// mappings alive while a pass reads them).
// Thread safety: every public method may be called from any thread. The callbacks run on the
// monitor's thread with no lock held, so they may call Watch() and Unwatch(); they get the
// target without `mapped` and `owner` (the monitor no longer holds the engine then).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "models/served_bytes.h"

namespace kimi::models {

struct IntegrityMonitorOptions {
  // Between passes over a version that passed; 0: only after Watch(), writes and CheckNow().
  std::chrono::milliseconds interval = std::chrono::hours(1);
  ServedBytesPace pace;
  bool watch_writes = true;
  std::function<void(const IntegrityTarget&, const IntegrityFailure&)> on_failure;  // required
  std::function<void(const IntegrityTarget&, const ServedBytesPass&)> on_pass;      // may be empty
};

class IntegrityMonitor {
 public:
  explicit IntegrityMonitor(IntegrityMonitorOptions options);
  ~IntegrityMonitor();  // Stop()
  IntegrityMonitor(const IntegrityMonitor&) = delete;
  IntegrityMonitor& operator=(const IntegrityMonitor&) = delete;

  // Checks `target` from now on instead of what was watched (a pass in progress over the old
  // one stops at its next chunk). Returns at once.
  void Watch(IntegrityTarget target);
  // Checks nothing until the next Watch().
  void Unwatch();
  // Asks for a pass over the watched version as soon as the thread is free.
  void CheckNow();
  // Ends the thread and drops the watched target (and with it the engine); later calls do
  // nothing.
  void Stop();

  // Passes that ran to their end (with or without a failure), for tests and logs.
  uint64_t passes() const { return passes_.load(); }

 private:
  void Run();
  // What Watch(), Unwatch() and a failure change: the target, its watches and what is due.
  // Precondition: mu_ held.
  void ReplaceTargetLocked(std::optional<IntegrityTarget> target);
  void WatchFilesLocked();  // Precondition: mu_ held.
  void ReadWriteEvents();

  const IntegrityMonitorOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<IntegrityTarget> target_;  // guarded by mu_
  uint64_t target_generation_ = 0;         // guarded by mu_; counts Watch() and Unwatch()
  bool pending_ = false;                   // guarded by mu_; a whole pass is due now
  std::set<std::string> written_;          // guarded by mu_; files a write event named, checked first
  std::map<int, std::string> watches_;     // guarded by mu_; inotify watch descriptor -> file
  bool stop_ = false;                      // guarded by mu_
  std::atomic<bool> cancel_{false};        // stops the pass in progress
  std::atomic<uint64_t> passes_{0};
  int inotify_fd_ = -1;  // -1 without watch_writes; the descriptor itself is read by writes_
  int wake_fd_ = -1;     // an eventfd that ends writes_
  std::thread thread_;
  std::thread writes_;
};

}  // namespace kimi::models
