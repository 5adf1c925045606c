// The whole-model comparison: the GPU forward pass (gpu_model.h) against the CPU engine
// (kimi::Model on the scalar reference kernels) on a synthetic k3-nano, every logit of every
// position. Skips when no device is visible.
//
// Tolerance, per logits row: max |gpu − cpu| <= 2e-3 · max |cpu|. The GPU sums in fp32 in other
// orders than the CPU reference (which uses double in places) through 6 layers; that moves a
// row by ~1e-5 of its scale, an indexing or layout bug by O(1). Greedy tokens must be identical.
#include "gpu/gpu_model.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "kimi/model.h"

namespace kimi::gpu {
namespace {

namespace fs = std::filesystem;

// The reference runs the scalar kernels (as model_test does): read once, at the first kernel call.
const bool kScalarKernels = [] { return setenv("KIMI_KERNELS", "scalar", /*overwrite=*/0) == 0; }();

constexpr double kRowTolerance = 2e-3;

std::vector<int32_t> Tokens(int n, uint32_t seed, int64_t vocab) {
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(vocab);
  return t;
}

// Rows of V logits; reports the worst row.
void ExpectRowsClose(const std::vector<float>& gpu, const std::vector<float>& cpu, int64_t V, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double worst = 0;
  int64_t worst_row = -1;
  for (int64_t r = 0; r * V < int64_t(cpu.size()); ++r) {
    double diff = 0, scale = 0;
    for (int64_t i = r * V; i < (r + 1) * V; ++i) {
      ASSERT_TRUE(std::isfinite(gpu[i])) << what << ": row " << r << " has a non-finite logit";
      diff = std::max(diff, double(std::fabs(gpu[i] - cpu[i])));
      scale = std::max(scale, double(std::fabs(cpu[i])));
    }
    const double rel = diff / std::max(scale, 1e-30);
    if (rel > worst) worst = rel, worst_row = r;
  }
  EXPECT_LE(worst, kRowTolerance) << what << ": worst row " << worst_row;
  std::printf("[ compare  ] %s: worst row error %.3g of its scale\n", what.c_str(), worst);
}

int32_t Argmax(const float* row, int64_t V) {
  return int32_t(std::max_element(row, row + V) - row);  // the first maximum: lower id on ties
}

class GpuModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kScalarKernels);
    if (DeviceCount() == 0) return;
    dir_ = new std::string((fs::temp_directory_path() / ("kimi_gpu_model_test_" + std::to_string(::getpid()))).string());
    fs::remove_all(*dir_);
    auto config = K3Preset("k3-nano");
    ASSERT_TRUE(config.ok());
    auto written = WriteSyntheticModel(*config, *dir_, {/*seed=*/7, /*max_shard_bytes=*/1u << 20});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    ModelOptions cpu_options;
    cpu_options.threads = 2;
    cpu_options.prefill_piece = 32;
    auto cpu = Model::Load(*dir_, cpu_options);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    cpu_ = std::move(cpu).value().release();
    GpuModelOptions gpu_options;
    // An 80-token prefill runs two pieces: 64 rows (the tensor-core GEMM on CUDA) and 16 (the
    // fp32 tile); the routed experts' few rows each take the GEMV, decode too.
    gpu_options.max_rows = 64;
    gpu_options.max_context = 256;
    gpu_options.mla_page_tokens = 16;
    uint64_t last_done = 0, last_total = 0;
    auto gpu = GpuModel::Load(*dir_, gpu_options, [&](uint64_t done, uint64_t total) {
      EXPECT_GE(done, last_done);
      last_done = done, last_total = total;
    });
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    EXPECT_EQ(last_done, last_total);
    gpu_ = std::move(gpu).value().release();
  }
  static void TearDownTestSuite() {
    delete gpu_;
    delete cpu_;
    gpu_ = nullptr;
    cpu_ = nullptr;
    if (dir_ != nullptr) fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (DeviceCount() == 0) GTEST_SKIP() << "no GPU device visible: the GPU model comparison is skipped";
    ASSERT_NE(gpu_, nullptr);
  }
  int64_t V() const { return cpu_->config().vocab_size; }

  static std::string* dir_;
  static Model* cpu_;
  static GpuModel* gpu_;
};

std::string* GpuModelTest::dir_ = nullptr;
Model* GpuModelTest::cpu_ = nullptr;
GpuModel* GpuModelTest::gpu_ = nullptr;

TEST_F(GpuModelTest, PrefillLogitsOfEveryPositionMatchTheCpuEngine) {
  const auto tokens = Tokens(80, 3, V());
  auto cpu_seq = cpu_->NewSequence();
  auto gpu_seq = gpu_->NewSequence();
  ASSERT_TRUE(gpu_seq.ok()) << gpu_seq.status().ToString();
  std::vector<float> cpu_logits, gpu_logits;
  ASSERT_TRUE(cpu_->Prefill(*cpu_seq, tokens, LogitsRows::kAll, &cpu_logits).ok());
  Status st = gpu_->Prefill(**gpu_seq, tokens, LogitsRows::kAll, &gpu_logits);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectRowsClose(gpu_logits, cpu_logits, V(), "prefill of 80 tokens");
  EXPECT_EQ((*gpu_seq)->length(), 80);

  // A second prefill continues the states (KDA recurrent and conv, MLA cache).
  const auto more = Tokens(12, 9, V());
  ASSERT_TRUE(cpu_->Prefill(*cpu_seq, more, LogitsRows::kLast, &cpu_logits).ok());
  st = gpu_->Prefill(**gpu_seq, more, LogitsRows::kLast, &gpu_logits);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectRowsClose(gpu_logits, cpu_logits, V(), "continued prefill, last row");
}

TEST_F(GpuModelTest, GreedyDecodeTokenByTokenMatchesTheCpuEngine) {
  const auto prompt = Tokens(9, 17, V());
  auto cpu_seq = cpu_->NewSequence();
  auto gpu_seq = gpu_->NewSequence();
  ASSERT_TRUE(gpu_seq.ok());
  std::vector<float> cpu_logits, gpu_logits;
  ASSERT_TRUE(cpu_->Prefill(*cpu_seq, prompt, LogitsRows::kLast, &cpu_logits).ok());
  ASSERT_TRUE(gpu_->Prefill(**gpu_seq, prompt, LogitsRows::kLast, &gpu_logits).ok());
  ExpectRowsClose(gpu_logits, cpu_logits, V(), "prompt");
  int32_t cpu_next = Argmax(cpu_logits.data(), V()), gpu_next = Argmax(gpu_logits.data(), V());
  constexpr int kSteps = 24;
  std::vector<float> all_cpu, all_gpu;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_EQ(gpu_next, cpu_next) << "greedy tokens differ at step " << step;
    SequenceState* cs = cpu_seq.get();
    GpuSequence* gs = gpu_seq->get();
    std::vector<int32_t> greedy;
    ASSERT_TRUE(cpu_->DecodeBatch(std::span<SequenceState* const>(&cs, 1), std::span<const int32_t>(&cpu_next, 1),
                                  &cpu_logits)
                    .ok());
    Status st = gpu_->DecodeBatch(std::span<GpuSequence* const>(&gs, 1), std::span<const int32_t>(&gpu_next, 1),
                                  &gpu_logits, &greedy);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(greedy.size(), 1u);
    EXPECT_EQ(greedy[0], Argmax(gpu_logits.data(), V())) << "device argmax vs host argmax, step " << step;
    all_cpu.insert(all_cpu.end(), cpu_logits.begin(), cpu_logits.end());
    all_gpu.insert(all_gpu.end(), gpu_logits.begin(), gpu_logits.end());
    cpu_next = Argmax(cpu_logits.data(), V());
    gpu_next = greedy[0];
  }
  EXPECT_EQ(gpu_next, cpu_next);
  ExpectRowsClose(all_gpu, all_cpu, V(), "24 greedy decode steps");
}

TEST_F(GpuModelTest, BatchedDecodeOfThreeSequencesMatchesTheCpuEngine) {
  constexpr int kSeqs = 3;
  std::vector<std::unique_ptr<SequenceState>> cpu_seqs;
  std::vector<std::unique_ptr<GpuSequence>> gpu_seqs;
  std::vector<float> cpu_logits, gpu_logits;
  for (int i = 0; i < kSeqs; ++i) {
    const auto prompt = Tokens(5 + 7 * i, 100 + i, V());  // different lengths: different cache positions
    cpu_seqs.push_back(cpu_->NewSequence());
    auto g = gpu_->NewSequence();
    ASSERT_TRUE(g.ok());
    gpu_seqs.push_back(std::move(g).value());
    ASSERT_TRUE(cpu_->Prefill(*cpu_seqs.back(), prompt, LogitsRows::kLast, &cpu_logits).ok());
    ASSERT_TRUE(gpu_->Prefill(*gpu_seqs.back(), prompt, LogitsRows::kLast, &gpu_logits).ok());
  }
  std::vector<SequenceState*> cs;
  std::vector<GpuSequence*> gs;
  for (int i = 0; i < kSeqs; ++i) cs.push_back(cpu_seqs[i].get()), gs.push_back(gpu_seqs[i].get());
  std::vector<float> all_cpu, all_gpu;
  for (int step = 0; step < 10; ++step) {
    const auto next = Tokens(kSeqs, 500 + step, V());  // the same fixed tokens on both sides
    ASSERT_TRUE(cpu_->DecodeBatch(cs, next, &cpu_logits).ok());
    Status st = gpu_->DecodeBatch(gs, next, &gpu_logits);
    ASSERT_TRUE(st.ok()) << st.ToString();
    all_cpu.insert(all_cpu.end(), cpu_logits.begin(), cpu_logits.end());
    all_gpu.insert(all_gpu.end(), gpu_logits.begin(), gpu_logits.end());
  }
  ExpectRowsClose(all_gpu, all_cpu, V(), "10 steps of a batch of 3");
}

TEST_F(GpuModelTest, RejectsWhatTheCpuEngineRejects) {
  auto seq = gpu_->NewSequence();
  ASSERT_TRUE(seq.ok());
  std::vector<float> logits;
  const std::vector<int32_t> bad = {int32_t(V())};
  EXPECT_EQ(gpu_->Prefill(**seq, bad, LogitsRows::kAll, &logits).code(), Status::Code::kInvalidArgument);
  const std::vector<int32_t> too_long(300, 1);  // max_context is 256
  EXPECT_EQ(gpu_->Prefill(**seq, too_long, LogitsRows::kLast, &logits).code(), Status::Code::kResourceExhausted);
  GpuSequence* twice[2] = {seq->get(), seq->get()};
  const std::vector<int32_t> two = {1, 2};
  EXPECT_EQ(gpu_->DecodeBatch(twice, two, &logits).code(), Status::Code::kInvalidArgument);
}

// The benchmark path for models too large to write (bench_presets.h): a directory without its
// matrices, the matrices generated on the device. No CPU reference exists for those weights, so
// this checks what can be checked: the pass runs, its logits are finite, the same seed gives the
// same logits and another seed other ones.
TEST(GpuModelSyntheticFill, RunsFromADirectoryWithoutMatrices) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no GPU device visible: the GPU model comparison is skipped";
  const std::string dir = (fs::temp_directory_path() / ("kimi_gpu_fill_test_" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  SynthOptions synth{/*seed=*/7, /*max_shard_bytes=*/1u << 20};
  synth.matrices_unwritten = true;
  ASSERT_TRUE(WriteSyntheticModel(*K3Preset("k3-nano"), dir, synth).ok());
  auto logits_for = [&](uint64_t seed) {
    GpuModelOptions options;
    options.max_rows = 32;
    options.max_context = 64;
    options.synthetic_fill_seed = seed;
    auto m = GpuModel::Load(dir, options);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    std::vector<float> logits;
    if (!m.ok()) return logits;
    auto seq = (*m)->NewSequence();
    EXPECT_TRUE(seq.ok());
    if (!seq.ok()) return logits;
    const Status st = (*m)->Prefill(**seq, Tokens(40, 5, (*m)->config().vocab_size), LogitsRows::kAll, &logits);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return logits;
  };
  const auto a = logits_for(5), again = logits_for(5), other = logits_for(6);
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](float x) { return std::isfinite(x); }));
  EXPECT_EQ(a, again);
  EXPECT_NE(a, other);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kimi::gpu
