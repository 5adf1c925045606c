// The step budget beside decodes: while sequences decode, a prompt is prefilled in chunks of at
// most PrefillBudget(decodes) tokens per step, and every decode still gets its token each step;
// without decodes (or with the bound off) a prompt takes the whole max_num_batched_tokens.
// Driven step by step on the scheduler itself (no runtime thread), so it is deterministic.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/k3_presets.h"
#include "io/k3_synth.h"

namespace kimi::runtime {
namespace {

namespace fs = std::filesystem;

TEST(PrefillBudgetTest, BoundsPrefillOnlyWhileSequencesDecode) {
  RuntimeOptions options;
  options.max_num_batched_tokens = 512;
  options.decode_step_token_budget = 32;
  EXPECT_EQ(PrefillBudget(0, options), 512);  // nothing decodes: nothing to delay
  EXPECT_EQ(PrefillBudget(1, options), 31);
  EXPECT_EQ(PrefillBudget(12, options), 20);
  EXPECT_EQ(PrefillBudget(16, options), 16);  // half the bound is the floor
  EXPECT_EQ(PrefillBudget(64, options), 16);  // prompts progress however many decode
  options.decode_step_token_budget = 0;       // off
  EXPECT_EQ(PrefillBudget(16, options), 512);
}

// Prompts that can finish whole in the step and outnumber the decodes are taken whole; otherwise
// the bound applies (and a prompt that does not fit whole never lifts it).
TEST(PrefillBudgetTest, PromptsThatFinishAndOutnumberTheDecodesRunWhole) {
  RuntimeOptions options;
  options.max_num_batched_tokens = 512;
  options.decode_step_token_budget = 32;
  const std::vector<int64_t> fifteen(15, 32);
  EXPECT_EQ(StepPrefillTokens(1, fifteen, options), 480);  // 15 streams join beside one
  EXPECT_EQ(StepPrefillTokens(0, fifteen, options), 512);  // nothing decodes: the whole step
  const std::vector<int64_t> two = {32, 32};
  EXPECT_EQ(StepPrefillTokens(2, two, options), 30);   // as many decodes as prompts: bounded
  EXPECT_EQ(StepPrefillTokens(1, two, options), 64);   // two prompts beside one decode: whole
  const std::vector<int64_t> long_first = {4000, 32, 32, 32};
  EXPECT_EQ(StepPrefillTokens(1, long_first, options), 31) << "admission order: the long prompt does not fit whole";
  const std::vector<int64_t> too_many(20, 32);            // 15 of 20 fit in 511 tokens
  EXPECT_EQ(StepPrefillTokens(1, too_many, options), 480);
  EXPECT_EQ(StepPrefillTokens(16, too_many, options), 16) << "15 that fit do not outnumber 16 decodes";
  options.decode_step_token_budget = 0;  // bound off: the whole room
  EXPECT_EQ(StepPrefillTokens(2, two, options), 510);
}

class SchedulerBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("kimi_scheduler_budget_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    auto config = K3Preset("k3-nano");
    ASSERT_TRUE(config.ok());
    ASSERT_TRUE(WriteSyntheticModel(*config, dir_, {/*seed=*/13, /*max_shard_bytes=*/1u << 20}).ok());
    auto model = Model::Load(dir_, ModelOptions{});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static GenerationRequest Request(int64_t prompt_tokens, int64_t max_tokens) {
    GenerationRequest request;
    for (int64_t i = 0; i < prompt_tokens; ++i) request.prompt.push_back(int32_t(1 + i % 50));
    request.sampling.temperature = 0;
    request.max_tokens = max_tokens;
    return request;
  }

  // Two sequences decode; then a `long_prompt`-token request arrives. Returns the prompt tokens
  // each following step consumed, until the long request has its first token, and checks that
  // both decodes got one token in each of those steps.
  std::vector<int64_t> PrefillPerStep(const RuntimeOptions& options, int64_t long_prompt) {
    Scheduler scheduler(*model_, options);
    std::vector<std::shared_ptr<RequestChannel>> channels;
    for (int i = 0; i < 2; ++i) {
      channels.push_back(std::make_shared<RequestChannel>(i));
      scheduler.Enqueue({channels.back(), Request(3, 200), Clock::now()});
    }
    scheduler.Step();  // both prompts in one step: nothing decodes yet
    EXPECT_EQ(scheduler.counters().prompt_tokens_processed, 6);
    EXPECT_EQ(scheduler.counters().tokens_generated, 2);
    channels.push_back(std::make_shared<RequestChannel>(2));
    scheduler.Enqueue({channels.back(), Request(long_prompt, 1), Clock::now()});
    std::vector<int64_t> per_step;
    while (!channels[2]->closed()) {
      const RuntimeCounters before = scheduler.counters();
      scheduler.Step();
      const RuntimeCounters& after = scheduler.counters();
      per_step.push_back(after.prompt_tokens_processed - before.prompt_tokens_processed);
      const bool long_done = channels[2]->closed();
      EXPECT_EQ(after.tokens_generated - before.tokens_generated, 2 + (long_done ? 1 : 0))
          << "step " << per_step.size() << ": every decode gets its token";
    }
    return per_step;
  }

  std::string dir_;
  std::unique_ptr<Model> model_;
};

TEST_F(SchedulerBudgetTest, PromptBesideDecodesIsChunkedToTheBound) {
  RuntimeOptions options;
  options.max_num_batched_tokens = 256;
  options.decode_step_token_budget = 8;  // beside 2 decodes: max(8 - 2, 4) = 6 prompt tokens a step
  options.prefix_caching = false;        // chunks end where the budget ends, not at page boundaries
  EXPECT_EQ(PrefillPerStep(options, 40), (std::vector<int64_t>{6, 6, 6, 6, 6, 6, 4}));
}

// The defaults: a prompt beside running decodes never makes a step more than the bound's rows
// while few decode, and never stalls however many decode. Checked on the scheduler with the
// default RuntimeOptions (2 decodes: bound - 2 prompt tokens a step), and on PrefillBudget at
// the row counts of the load benchmark.
TEST_F(SchedulerBudgetTest, DefaultBoundChunksPromptsBesideDecodesWithoutStallingThem) {
  RuntimeOptions options;
  options.prefix_caching = false;
  const int64_t bound = options.decode_step_token_budget;
  ASSERT_GT(bound, 0) << "the bound is on by default";
  const std::vector<int64_t> per_step = PrefillPerStep(options, 40);
  const int64_t chunk = PrefillBudget(2, options);
  EXPECT_EQ(chunk, bound - 2);
  ASSERT_EQ(int64_t(per_step.size()), (40 + chunk - 1) / chunk) << "the prompt progresses every step";
  for (size_t i = 0; i + 1 < per_step.size(); ++i) EXPECT_EQ(per_step[i], chunk) << "step " << i;
  EXPECT_EQ(per_step.back(), 40 - chunk * int64_t(per_step.size() - 1));
  // Beside as many decodes as the bound a step carries at most as many prompt rows as decode
  // rows, and prompts still progress by half the bound beside any number of decodes.
  EXPECT_LE(PrefillBudget(bound, options), bound / 2);
  EXPECT_EQ(PrefillBudget(64, options), bound / 2);
  EXPECT_GE(PrefillBudget(64, options), 1);
}

// Streams joining a running one: beside one decode, three short prompts run whole in one step
// (they outnumber it), and from the next step on all four decode, each getting a token a step.
TEST_F(SchedulerBudgetTest, ShortPromptsJoiningFewDecodesRunWholeInOneStep) {
  RuntimeOptions options;
  options.decode_step_token_budget = 8;  // bounded, beside one decode: 7 tokens a step
  options.prefix_caching = false;
  Scheduler scheduler(*model_, options);
  std::vector<std::shared_ptr<RequestChannel>> channels;
  channels.push_back(std::make_shared<RequestChannel>(0));
  scheduler.Enqueue({channels.back(), Request(5, 50), Clock::now()});
  scheduler.Step();
  ASSERT_EQ(scheduler.counters().tokens_generated, 1);
  for (int i = 1; i <= 3; ++i) {
    channels.push_back(std::make_shared<RequestChannel>(i));
    scheduler.Enqueue({channels.back(), Request(10, 50), Clock::now()});
  }
  RuntimeCounters before = scheduler.counters();
  scheduler.Step();
  EXPECT_EQ(scheduler.counters().prompt_tokens_processed - before.prompt_tokens_processed, 30);
  EXPECT_EQ(scheduler.counters().tokens_generated - before.tokens_generated, 4) << "the decode and three first tokens";
  before = scheduler.counters();
  scheduler.Step();
  EXPECT_EQ(scheduler.counters().tokens_generated - before.tokens_generated, 4) << "all four decode";
  // A single prompt beside a decode does not outnumber it: the bound chunks it.
  channels.push_back(std::make_shared<RequestChannel>(4));
  scheduler.Enqueue({channels.back(), Request(10, 50), Clock::now()});
  before = scheduler.counters();
  scheduler.Step();
  EXPECT_EQ(scheduler.counters().prompt_tokens_processed - before.prompt_tokens_processed, 4)
      << "beside 4 decodes: max(8 - 4, 8 / 2)";
}

TEST_F(SchedulerBudgetTest, WithoutTheBoundThePromptTakesTheWholeStepBudget) {
  RuntimeOptions options;
  options.max_num_batched_tokens = 256;
  options.decode_step_token_budget = 0;
  options.prefix_caching = false;
  EXPECT_EQ(PrefillPerStep(options, 40), (std::vector<int64_t>{40}));
}

// The step observer sees each forward pass's composition: two prompts alone, then the decodes
// beside the chunks of a third prompt, then the decodes alone; steps that run nothing are not
// reported. Timings are reported but not checked (they depend on the machine).
TEST_F(SchedulerBudgetTest, StepObserverReportsEachPassComposition) {
  RuntimeOptions options;
  options.decode_step_token_budget = 8;  // beside 2 decodes: 6 prompt tokens a step
  options.prefix_caching = false;
  std::vector<StepStats> steps;
  options.step_observer = [&steps](const StepStats& s) { steps.push_back(s); };
  Scheduler scheduler(*model_, options);
  scheduler.Step();  // nothing to run: not reported
  EXPECT_TRUE(steps.empty());
  std::vector<std::shared_ptr<RequestChannel>> channels;
  const Clock::time_point submitted = Clock::now();
  for (int i = 0; i < 2; ++i) {
    channels.push_back(std::make_shared<RequestChannel>(i));
    scheduler.Enqueue({channels.back(), Request(3, 4), submitted});
  }
  scheduler.Step();
  channels.push_back(std::make_shared<RequestChannel>(2));
  scheduler.Enqueue({channels.back(), Request(10, 1), Clock::now()});
  while (scheduler.HasWork()) scheduler.Step();
  struct Composition {
    int64_t decodes, prompt_tokens, pieces;
    bool operator==(const Composition&) const = default;
  };
  std::vector<Composition> got;
  for (const StepStats& s : steps) got.push_back({s.decode_rows, s.prompt_tokens, s.prompt_pieces});
  // 2 prompts of 3; 2 decodes + 6 of the 10; 2 decodes + the last 4 (the third request ends on
  // its first token); the two decodes left of their 4 tokens.
  const std::vector<Composition> want = {{0, 6, 2}, {2, 6, 1}, {2, 4, 1}, {2, 0, 0}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(got[i] == want[i]) << "step " << i << ": decodes " << got[i].decodes << ", prompt tokens "
                                   << got[i].prompt_tokens << " in " << got[i].pieces;
    EXPECT_EQ(steps[i].step, int64_t(i) + 1) << "the empty first step still counts";
    EXPECT_LE(steps[i].start, steps[i].end);
    EXPECT_GE(steps[i].forward_seconds, 0);
  }
  // A request's statistics carry its submission time, the origin of its token times.
  GenerationEvent event;
  while (channels[0]->Next(&event)) {
    if (event.kind == GenerationEvent::Kind::kFinish) {
      EXPECT_EQ(event.stats.submitted, submitted);
    }
  }
  EXPECT_EQ(event.kind, GenerationEvent::Kind::kFinish);
}

}  // namespace
}  // namespace kimi::runtime
