// ReusedThreads: runs tasks at once, each on a thread of its own, reusing threads that
// finished earlier tasks instead of creating and destroying one per task. Streamed requests
// run their backend on such a thread (background_generation.h); creating a thread for every
// request cost a clone, a stack mapping and its release each time.
//
// There is no queue and no bound: a task starts on an idle thread, or on a new one when none
// is idle, so a task never waits behind another (callers bound their own concurrency, the
// HTTP server by its connection workers). A thread idle for `idle_keep` exits.
//
// Owns: its threads (detached; counted, and waited for by the destructor).
// Thread safety: Run() from any thread. The destructor waits for running tasks to return.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace kimi::api {

class ReusedThreads {
 public:
  explicit ReusedThreads(std::chrono::milliseconds idle_keep);
  ~ReusedThreads();
  ReusedThreads(const ReusedThreads&) = delete;
  ReusedThreads& operator=(const ReusedThreads&) = delete;

  // Starts `task` on an idle thread or a new one.
  void Run(std::function<void()> task);
  // Threads alive now, busy or idle.
  size_t threads() const;
  // Threads alive now with no task (waiting for one, or not started yet).
  size_t idle_threads() const;

 private:
  void Loop();

  const std::chrono::milliseconds idle_keep_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a task is queued, or stopping_
  std::condition_variable exit_cv_;  // a thread exited
  std::deque<std::function<void()>> tasks_;  // guarded by mu_; never more than the idle threads take
  size_t idle_ = 0;                          // guarded by mu_; waiting or not yet started
  size_t live_ = 0;                          // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
};

}  // namespace kimi::api
