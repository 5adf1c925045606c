// The forward pass on the optimised kernels (the table this CPU selects; model_test runs the
// scalar ones): a result must not depend on what the calling thread computed before. The
// kernels keep per-thread scratch between calls (kernels/cpu/scratch.h), so each check runs the
// same work on a fresh thread and again on a thread that has just run other shapes, and
// compares the logits bit for bit: same kernels, same rows, same order, so nothing but state
// left behind can make them differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include "core/float_mode.h"
#include "io/test_util.h"
#include "kimi/model.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

std::vector<int32_t> Tokens(int n, uint32_t seed, int64_t vocab) {
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(vocab);
  return t;
}

// Runs fn on a new thread (whose kernel scratch is empty) and waits for it.
template <typename Fn>
void OnFreshThread(Fn&& fn) {
  std::thread t(std::forward<Fn>(fn));
  t.join();
}

class OptimisedKernelsModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = testing_util::WriteTestModel("optimised_model_test", "k3-nano", /*seed=*/7);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_ = new std::string(std::move(dir).value());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::unique_ptr<Model> Load(bool keep_subnormals = false) {
    ModelOptions options;
    options.threads = 2;  // the products' rows are split over the pool, as in serving
    options.keep_subnormals = keep_subnormals;
    auto model = Model::Load(*dir_, options);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }
  static std::string* dir_;
};
std::string* OptimisedKernelsModelTest::dir_ = nullptr;

// A prompt of 100 tokens is one prefill piece of 100 rows: past the decode GEMVs' row limits,
// so the BF16 products take the GEMM. After decode steps on another sequence (which leave the
// GEMV's prepared activations in the thread's scratch) it must give the same logits as on a
// thread that never ran anything.
TEST_F(OptimisedKernelsModelTest, LongPrefillAfterDecodesEqualsPrefillOnAFreshThread) {
  auto model = Load();
  ASSERT_NE(model, nullptr);
  const int64_t V = model->config().vocab_size;
  const std::vector<int32_t> prompt = Tokens(100, 3, V);

  std::vector<float> fresh;
  OnFreshThread([&] {
    auto seq = model->NewSequence();
    ASSERT_TRUE(model->Prefill(*seq, prompt, LogitsRows::kAll, &fresh).ok());
  });

  std::vector<float> after;
  OnFreshThread([&] {
    // Other work first: a short prompt, then batched decode steps of two sequences.
    auto a = model->NewSequence(), b = model->NewSequence();
    std::vector<float> scratch;
    const std::vector<int32_t> short_prompt = Tokens(9, 4, V);
    ASSERT_TRUE(model->Prefill(*a, short_prompt, LogitsRows::kLast, &scratch).ok());
    ASSERT_TRUE(model->Prefill(*b, short_prompt, LogitsRows::kLast, &scratch).ok());
    SequenceState* states[] = {a.get(), b.get()};
    for (int step = 0; step < 3; ++step) {
      const int32_t ids[] = {int32_t(11 + step), int32_t(23 + step)};
      ASSERT_TRUE(model->DecodeBatch(states, ids, &scratch).ok());
    }
    auto seq = model->NewSequence();
    ASSERT_TRUE(model->Prefill(*seq, prompt, LogitsRows::kAll, &after).ok());
  });

  ASSERT_EQ(fresh.size(), prompt.size() * size_t(V));
  EXPECT_EQ(after, fresh);
}

// The reverse order: decode steps after a long prefill on the same thread equal the same steps
// on a fresh thread.
TEST_F(OptimisedKernelsModelTest, DecodeAfterLongPrefillEqualsDecodeOnAFreshThread) {
  auto model = Load();
  ASSERT_NE(model, nullptr);
  const int64_t V = model->config().vocab_size;
  const std::vector<int32_t> short_prompt = Tokens(7, 5, V);
  auto decode_three = [&](std::vector<float>* out) {
    auto seq = model->NewSequence();
    std::vector<float> logits;
    ASSERT_TRUE(model->Prefill(*seq, short_prompt, LogitsRows::kLast, &logits).ok());
    SequenceState* states[] = {seq.get()};
    for (int step = 0; step < 3; ++step) {
      const int32_t id = 31 + step;
      ASSERT_TRUE(model->DecodeBatch(states, std::span<const int32_t>(&id, 1), &logits).ok());
      out->insert(out->end(), logits.begin(), logits.end());
    }
  };

  std::vector<float> fresh, after;
  OnFreshThread([&] { decode_three(&fresh); });
  OnFreshThread([&] {
    auto other = model->NewSequence();
    std::vector<float> scratch;
    ASSERT_TRUE(model->Prefill(*other, Tokens(130, 6, V), LogitsRows::kAll, &scratch).ok());
    decode_three(&after);
  });
  ASSERT_EQ(fresh.size(), 3 * size_t(V));
  EXPECT_EQ(after, fresh);
}

// The forward pass flushes subnormals to zero (core/float_mode.h). On a 100-token prompt
// (one chunked-KDA piece, whose cumulative gate decays reach the subnormal range) the logits
// must stay within the engine's tolerance of the same pass with IEEE subnormals, and the
// calling thread keeps its own mode.
TEST_F(OptimisedKernelsModelTest, FlushingSubnormalsKeepsTheLogitsOfAPassWithThem) {
  if (!SubnormalsControllable()) GTEST_SKIP() << "no flush-to-zero control on this architecture";
  auto flushed_model = Load();
  auto kept_model = Load(/*keep_subnormals=*/true);
  ASSERT_NE(flushed_model, nullptr);
  ASSERT_NE(kept_model, nullptr);
  const int64_t V = flushed_model->config().vocab_size;
  const std::vector<int32_t> prompt = Tokens(100, 8, V);
  std::vector<float> flushed, kept;
  OnFreshThread([&] {
    auto seq = flushed_model->NewSequence();
    ASSERT_TRUE(flushed_model->Prefill(*seq, prompt, LogitsRows::kAll, &flushed).ok());
    EXPECT_EQ(ThreadSubnormals(), Subnormals::kKeep) << "the pass left its mode on the calling thread";
    seq = kept_model->NewSequence();
    ASSERT_TRUE(kept_model->Prefill(*seq, prompt, LogitsRows::kAll, &kept).ok());
  });
  ASSERT_EQ(flushed.size(), kept.size());
  double scale = 0, worst = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    scale = std::max(scale, double(std::fabs(kept[i])));
    worst = std::max(worst, double(std::fabs(flushed[i] - kept[i])));
  }
  // The tolerance the engine keeps against the reference (tests/reference: 1e-3 of the scale).
  EXPECT_LE(worst, 1e-3 * scale) << "max |difference| " << worst << " of logits up to " << scale;
}

}  // namespace
}  // namespace kimi
