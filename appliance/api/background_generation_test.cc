#include "api/background_generation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kimi::api {
namespace {

using std::chrono::milliseconds;

// A request queued behind others: it emits nothing until it is cancelled through the canceller
// it registers, or until a bound no test waits for (so a failing test ends instead of hanging).
class QueuedBackend : public Backend {
 public:
  std::string_view name() const override { return "queued"; }
  std::vector<std::string> Models() const override { return {"m"}; }
  bool Healthy(std::string_view) const override { return true; }

  Status Generate(const BackendRequest&, EventSink& sink, BackendOutcome*) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(30), [this] { return register_now_; });
    }
    const CancelWhileRegistered registered(sink, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [this] { return cancelled_; });
    return Status::Cancelled("dropped from the queue");
  }

  void LetRegister() {
    std::lock_guard<std::mutex> lock(mu_);
    register_now_ = true;
    cv_.notify_all();
  }
  bool cancelled() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool register_now_ = false;
  bool cancelled_ = false;
};

TEST(BackgroundGenerationTest, ClientLeavingBeforeTheFirstEventEndsTheWaitAndCancelsTheQueuedWork) {
  QueuedBackend backend;
  backend.LetRegister();
  Status result;
  {
    BackgroundGeneration generation(backend, BackendRequest{});
    std::atomic<int> checks{0};
    EXPECT_FALSE(generation.WaitForFirstEvent(&result, milliseconds(5), [&] { return ++checks < 3; }));
    EXPECT_EQ(checks.load(), 3);
    BackendOutcome outcome;
    EXPECT_TRUE(generation.WaitOutcome(&outcome, milliseconds(20'000)));
  }
  EXPECT_EQ(result.code(), Status::Code::kCancelled);
  EXPECT_TRUE(backend.cancelled());
}

TEST(BackgroundGenerationTest, AbandonCancelsWorkWaitingForItsFirstEvent) {
  QueuedBackend backend;
  backend.LetRegister();
  BackgroundGeneration generation(backend, BackendRequest{});
  generation.Abandon();
  BackendOutcome outcome;
  EXPECT_TRUE(generation.WaitOutcome(&outcome, milliseconds(20'000)));
  EXPECT_TRUE(backend.cancelled());
}

TEST(BackgroundGenerationTest, CancellerRegisteredAfterTheClientLeftIsCalledAtOnce) {
  QueuedBackend backend;
  BackgroundGeneration generation(backend, BackendRequest{});
  generation.Abandon();  // before the backend has registered anything
  backend.LetRegister();
  BackendOutcome outcome;
  EXPECT_TRUE(generation.WaitOutcome(&outcome, milliseconds(20'000)));
  EXPECT_TRUE(backend.cancelled());
}

// A present client keeps waiting: the first event, when it comes, is what ends the wait.
class OneEventBackend : public Backend {
 public:
  std::string_view name() const override { return "one"; }
  std::vector<std::string> Models() const override { return {"m"}; }
  bool Healthy(std::string_view) const override { return true; }
  Status Generate(const BackendRequest&, EventSink& sink, BackendOutcome*) override {
    std::this_thread::sleep_for(milliseconds(30));
    StreamEvent finish;
    finish.kind = StreamEventKind::kFinish;
    return sink.Emit(finish) ? Status::OK() : Status::Cancelled("gone");
  }
};

TEST(BackgroundGenerationTest, PresentClientWaitsForTheFirstEvent) {
  OneEventBackend backend;
  BackgroundGeneration generation(backend, BackendRequest{});
  Status result;
  EXPECT_TRUE(generation.WaitForFirstEvent(&result, milliseconds(1), [] { return true; }));
}

}  // namespace
}  // namespace kimi::api
