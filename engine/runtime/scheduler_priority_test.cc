// The scheduler's admission order: with one sequence running at a time, waiting requests are
// admitted by priority (lower value first) and, within a priority, in arrival order. Driven
// step by step on the scheduler itself (no runtime thread), so the order is deterministic.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "io/k3_presets.h"
#include "io/k3_synth.h"

namespace kimi::runtime {
namespace {

namespace fs = std::filesystem;

class SchedulerPriorityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("kimi_scheduler_priority_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    auto config = K3Preset("k3-nano");
    ASSERT_TRUE(config.ok());
    ASSERT_TRUE(WriteSyntheticModel(*config, dir_, {/*seed=*/11, /*max_shard_bytes=*/1u << 20}).ok());
    auto model = Model::Load(dir_, ModelOptions{});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Enqueues one request per priority (ids 0, 1, ...), runs the scheduler to the end with one
  // sequence at a time, and returns the ids in the order their requests ended.
  std::vector<uint64_t> EndOrder(const std::vector<int>& priorities) {
    RuntimeOptions options;
    options.max_num_seqs = 1;
    Scheduler scheduler(*model_, options);
    std::vector<std::shared_ptr<RequestChannel>> channels;
    for (size_t i = 0; i < priorities.size(); ++i) {
      GenerationRequest request;
      request.prompt = {1, 2, 3};
      request.sampling.temperature = 0;
      request.max_tokens = 2;
      request.priority = priorities[i];
      channels.push_back(std::make_shared<RequestChannel>(i));
      scheduler.Enqueue({channels.back(), std::move(request), Clock::now()});
    }
    std::vector<uint64_t> ended;
    while (scheduler.HasWork()) {
      scheduler.Step();
      for (const auto& channel : channels) {
        if (channel->closed() && std::find(ended.begin(), ended.end(), channel->id()) == ended.end()) {
          ended.push_back(channel->id());
        }
      }
    }
    return ended;
  }

  std::string dir_;
  std::unique_ptr<Model> model_;
};

TEST_F(SchedulerPriorityTest, EqualPrioritiesKeepArrivalOrder) {
  EXPECT_EQ(EndOrder({0, 0, 0}), (std::vector<uint64_t>{0, 1, 2}));
}

TEST_F(SchedulerPriorityTest, LowerPriorityValueIsAdmittedFirstAndArrivalOrderHoldsWithinAClass) {
  // Agentic (1), agentic (1), chat (0), agentic (1), chat (0): both chat requests first, in
  // arrival order, then the agentic ones in arrival order.
  EXPECT_EQ(EndOrder({1, 1, 0, 1, 0}), (std::vector<uint64_t>{2, 4, 0, 1, 3}));
}

}  // namespace
}  // namespace kimi::runtime
