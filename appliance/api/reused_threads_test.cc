#include "api/reused_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace kimi::api {
namespace {

using std::chrono::milliseconds;

// Blocks tasks until opened, so a test can hold many of them running at once.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  void WaitForWaiters(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return waiting_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

// Runs `task` and waits until it has returned.
void RunAndWait(ReusedThreads& threads, std::function<void()> task) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  threads.Run([&] {
    task();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
}

TEST(ReusedThreads, TasksRunningTogetherEachGetAThread) {
  Gate gate;
  ReusedThreads threads(milliseconds(60'000));
  constexpr int kTasks = 8;
  for (int i = 0; i < kTasks; ++i) threads.Run([&] { gate.Wait(); });
  // Every task runs at once: none waits behind another (otherwise this would never return).
  gate.WaitForWaiters(kTasks);
  EXPECT_EQ(threads.threads(), static_cast<size_t>(kTasks));
  gate.Open();
}

TEST(ReusedThreads, ATaskAfterAnotherReusesItsThread) {
  ReusedThreads threads(milliseconds(60'000));
  std::set<std::thread::id> seen;
  for (int i = 0; i < 5; ++i) {
    RunAndWait(threads, [&] { seen.insert(std::this_thread::get_id()); });
    // The task has returned, but its thread may not count as idle yet; a task started in that
    // moment rightly gets a new thread. Wait until it is idle (a hang bound, not a timing
    // assertion), so each later task finds it.
    for (int j = 0; j < 2000 && threads.idle_threads() < threads.threads(); ++j) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_EQ(threads.idle_threads(), threads.threads());
  }
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(threads.threads(), 1u);
}

TEST(ReusedThreads, IdleThreadsExitAfterTheirKeepTime) {
  ReusedThreads threads(milliseconds(1));
  RunAndWait(threads, [] {});
  // Bounded wait for the idle thread to leave; a hang bound, not a timing assertion.
  for (int i = 0; i < 2000 && threads.threads() > 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(threads.threads(), 0u);
  // And a later task still runs.
  std::atomic<bool> ran{false};
  RunAndWait(threads, [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(ReusedThreads, DestructorWaitsForRunningTasks) {
  std::atomic<bool> finished{false};
  Gate gate;  // outlives the threads, whose task uses it
  {
    ReusedThreads threads(milliseconds(60'000));
    threads.Run([&] {
      gate.Wait();
      std::this_thread::sleep_for(milliseconds(20));
      finished = true;
    });
    gate.WaitForWaiters(1);
    gate.Open();
  }
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace kimi::api
