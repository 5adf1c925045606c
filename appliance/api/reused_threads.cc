#include "api/reused_threads.h"

#include <thread>
#include <utility>

namespace kimi::api {

ReusedThreads::ReusedThreads(std::chrono::milliseconds idle_keep) : idle_keep_(idle_keep) {}

ReusedThreads::~ReusedThreads() {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  work_cv_.notify_all();
  exit_cv_.wait(lock, [this] { return live_ == 0; });
}

void ReusedThreads::Run(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  tasks_.push_back(std::move(task));
  if (tasks_.size() <= idle_) {
    work_cv_.notify_one();
    return;
  }
  // A thread counts as idle from its creation: until it starts, the tasks it will take must
  // not make further threads.
  ++live_;
  ++idle_;
  std::thread([this] { Loop(); }).detach();
}

size_t ReusedThreads::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

size_t ReusedThreads::idle_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_;
}

void ReusedThreads::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {  // counted in idle_ here
    if (tasks_.empty()) {
      const bool woken = work_cv_.wait_for(lock, idle_keep_, [this] { return !tasks_.empty() || stopping_; });
      if (!woken || tasks_.empty()) break;  // idle too long, or stopping with nothing to run
    }
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    lock.unlock();
    task();
    task = nullptr;  // the task's captures are released before the thread counts as idle
    lock.lock();
    ++idle_;
  }
  --idle_;
  --live_;
  // Notified under the lock: once it is released the destructor may run, and this thread
  // touches nothing of the object after that.
  exit_cv_.notify_all();
}

}  // namespace kimi::api
