// Tests of the K3 forward pass on a k3-nano model synthesised into a temp dir: prefill (chunked
// KDA) against token-by-token decode, batched decode against each sequence alone, and loading
// failures that must name the tensor. Agreement with the numpy reference is the CTest
// reference_vs_engine (tests/reference).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "io/safetensors_writer.h"
#include "kimi/model.h"
#include "kimi/k3_tensors.h"
#include "kimi/model_dir.h"
#include "kimi/safetensors.h"
#include "model/moe.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

// These tests check the model's own logic (chunked vs recurrent KDA, state carried between
// pieces, batching), so they run on the scalar reference kernels: the AVX2 decode GEMV
// quantises activations to int16 (~2e-5 relative per product, kernels.h), which is enough to
// flip a near-tied expert choice somewhere in 150 tokens and turn one token into an outlier.
// The optimised kernels are held to the numpy reference by the CTest reference_vs_engine.
// KIMI_KERNELS is read once, at the first kernel call; a value set by the caller wins.
const bool kScalarKernels = [] { return setenv("KIMI_KERNELS", "scalar", /*overwrite=*/0) == 0; }();

std::string NanoDir(const std::string& tag) {
  fs::path dir = fs::temp_directory_path() / ("kimi_model_test_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto config = K3Preset("k3-nano");
  EXPECT_TRUE(config.ok());
  auto written = WriteSyntheticModel(*config, dir.string(), {/*seed=*/7, /*max_shard_bytes=*/1u << 20});
  EXPECT_TRUE(written.ok()) << written.status().ToString();
  return dir.string();
}

// max |a − b| / max |b|
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return diff / scale;
}

std::vector<int32_t> Tokens(int n, uint32_t seed, int64_t vocab) {
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(vocab);
  return t;
}

class NanoModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kScalarKernels);
    dir_ = new std::string(NanoDir("shared"));
    ModelOptions options;
    options.threads = 2;
    options.prefill_piece = 48;  // several pieces, and KDA chunks that end mid-piece
    auto model = Model::Load(*dir_, options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value().release();
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string* dir_;
  static Model* model_;
};
std::string* NanoModelTest::dir_ = nullptr;
Model* NanoModelTest::model_ = nullptr;

TEST_F(NanoModelTest, PrefillMatchesTokenByTokenDecode) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<int32_t> ids = Tokens(150, 1, V);  // > 4 KDA chunks of 32, 4 prefill pieces
  auto prefill_seq = model_->NewSequence();
  std::vector<float> prefill;
  ASSERT_TRUE(model_->Prefill(*prefill_seq, ids, LogitsRows::kAll, &prefill).ok());
  ASSERT_EQ(prefill.size(), ids.size() * V);

  auto decode_seq = model_->NewSequence();
  std::vector<float> decode, step;
  SequenceState* states[] = {decode_seq.get()};
  for (int32_t id : ids) {
    ASSERT_TRUE(model_->DecodeBatch(states, std::span<const int32_t>(&id, 1), &step).ok());
    decode.insert(decode.end(), step.begin(), step.end());
  }
  EXPECT_EQ(prefill_seq->length, 150);
  EXPECT_EQ(decode_seq->length, 150);
  EXPECT_LT(RelativeError(prefill, decode), 1e-4);

  // The states left behind agree too: one more token continues both the same way.
  const int32_t next = 17;
  std::vector<float> a, b;
  ASSERT_TRUE(model_->Prefill(*prefill_seq, std::span<const int32_t>(&next, 1), LogitsRows::kLast, &a).ok());
  ASSERT_TRUE(model_->DecodeBatch(states, std::span<const int32_t>(&next, 1), &b).ok());
  EXPECT_LT(RelativeError(a, b), 1e-4);
}

TEST_F(NanoModelTest, LastRowLogitsEqualTheLastOfAll) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<int32_t> ids = Tokens(70, 2, V);
  auto s1 = model_->NewSequence(), s2 = model_->NewSequence();
  std::vector<float> all, last;
  ASSERT_TRUE(model_->Prefill(*s1, ids, LogitsRows::kAll, &all).ok());
  ASSERT_TRUE(model_->Prefill(*s2, ids, LogitsRows::kLast, &last).ok());
  ASSERT_EQ(last.size(), size_t(V));
  // The lm_head product of one row and of many take different kernel paths (GEMV, tiled GEMM).
  EXPECT_LT(RelativeError(std::vector<float>(all.end() - V, all.end()), last), 1e-6);
}

TEST_F(NanoModelTest, BatchedDecodeMatchesEachSequenceAlone) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<int> prompt_lengths = {1, 5, 33, 70};
  const int steps = 4;
  std::vector<std::unique_ptr<SequenceState>> batched, alone;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<float> logits;
  for (size_t i = 0; i < prompt_lengths.size(); ++i) {
    prompts.push_back(Tokens(prompt_lengths[i], 100 + uint32_t(i), V));
    batched.push_back(model_->NewSequence());
    alone.push_back(model_->NewSequence());
    ASSERT_TRUE(model_->Prefill(*batched[i], prompts[i], LogitsRows::kLast, &logits).ok());
    ASSERT_TRUE(model_->Prefill(*alone[i], prompts[i], LogitsRows::kLast, &logits).ok());
  }
  std::vector<SequenceState*> states;
  for (auto& s : batched) states.push_back(s.get());
  for (int step = 0; step < steps; ++step) {
    std::vector<int32_t> tokens;
    for (size_t i = 0; i < prompts.size(); ++i) tokens.push_back(int32_t((7 * step + 13 * i) % V));
    std::vector<float> together;
    ASSERT_TRUE(model_->DecodeBatch(states, tokens, &together).ok());
    ASSERT_EQ(together.size(), prompts.size() * V);
    for (size_t i = 0; i < prompts.size(); ++i) {
      SequenceState* one[] = {alone[i].get()};
      std::vector<float> single;
      ASSERT_TRUE(model_->DecodeBatch(one, std::span<const int32_t>(&tokens[i], 1), &single).ok());
      std::vector<float> row(together.begin() + i * V, together.begin() + (i + 1) * V);
      EXPECT_LT(RelativeError(row, single), 1e-5) << "sequence " << i << " step " << step;
    }
  }
}

// ForwardBatch with prefill chunks of several lengths and decodes in the same pass: each input's
// logits equal what it gets in a pass of its own, and greedy continuations stay identical.
TEST_F(NanoModelTest, MixedBatchMatchesEachSequenceAlone) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<int> prompt_lengths = {1, 9, 40, 70, 3};
  const int64_t chunk = 16;  // prompts longer than this prefill over several passes
  const size_t n = prompt_lengths.size();
  std::vector<std::unique_ptr<SequenceState>> batched, alone;
  std::vector<std::vector<int32_t>> prompts, greedy_batched(n), greedy_alone(n);
  for (size_t i = 0; i < n; ++i) {
    prompts.push_back(Tokens(prompt_lengths[i], 300 + uint32_t(i), V));
    batched.push_back(model_->NewSequence());
    alone.push_back(model_->NewSequence());
  }
  auto argmax = [V](const float* row) { return int32_t(std::max_element(row, row + V) - row); };
  // Sequence i consumes its prompt in chunks, then decodes its own greedy tokens; the sequences
  // are staggered so that most passes mix prefill chunks with decodes.
  auto next_input = [&](size_t i, const std::vector<int32_t>& generated, int64_t consumed, bool* last) {
    const int64_t P = int64_t(prompts[i].size());
    if (consumed < P) {
      const int64_t len = std::min(chunk, P - consumed);
      *last = consumed + len == P;
      return std::span<const int32_t>(prompts[i]).subspan(size_t(consumed), size_t(len));
    }
    *last = true;
    return std::span<const int32_t>(&generated.back(), 1);
  };
  for (int pass = 0; pass < 10; ++pass) {
    std::vector<BatchInput> inputs;
    std::vector<size_t> who;
    for (size_t i = 0; i < n; ++i) {
      if (size_t(pass) < i) continue;  // sequence i joins at pass i
      bool last = false;
      const auto tokens = next_input(i, greedy_batched[i], batched[i]->length, &last);
      inputs.push_back({batched[i].get(), tokens, last});
      who.push_back(i);
    }
    std::vector<float> together;
    ASSERT_TRUE(model_->ForwardBatch(inputs, &together).ok());
    size_t row = 0;
    for (size_t j = 0; j < inputs.size(); ++j) {
      const size_t i = who[j];
      bool last = false;
      const auto tokens = next_input(i, greedy_alone[i], alone[i]->length, &last);
      ASSERT_EQ(tokens.size(), inputs[j].tokens.size());
      BatchInput single_input{alone[i].get(), tokens, last};
      std::vector<float> single;
      ASSERT_TRUE(model_->ForwardBatch(std::span<const BatchInput>(&single_input, 1), &single).ok());
      ASSERT_EQ(single.size(), last ? size_t(V) : 0u);
      if (!last) continue;
      const std::vector<float> mixed(together.begin() + row * V, together.begin() + (row + 1) * V);
      ++row;
      EXPECT_LT(RelativeError(mixed, single), 1e-5) << "sequence " << i << " pass " << pass;
      greedy_batched[i].push_back(argmax(mixed.data()));
      greedy_alone[i].push_back(argmax(single.data()));
    }
    ASSERT_EQ(row * V, together.size());
  }
  for (size_t i = 0; i < n; ++i) {
    EXPECT_FALSE(greedy_alone[i].empty()) << "sequence " << i;
    EXPECT_EQ(greedy_batched[i], greedy_alone[i]) << "sequence " << i;
  }
  // Batched prefill in chunks equals the one-call Prefill of the whole prompt.
  auto whole = model_->NewSequence();
  std::vector<float> whole_logits;
  ASSERT_TRUE(model_->Prefill(*whole, prompts[3], LogitsRows::kLast, &whole_logits).ok());
  auto pieces = model_->NewSequence();
  std::vector<float> piece_logits;
  for (size_t begin = 0; begin < prompts[3].size(); begin += chunk) {
    const size_t len = std::min<size_t>(chunk, prompts[3].size() - begin);
    const BatchInput in{pieces.get(), std::span<const int32_t>(prompts[3]).subspan(begin, len),
                        begin + len == prompts[3].size()};
    ASSERT_TRUE(model_->ForwardBatch(std::span<const BatchInput>(&in, 1), &piece_logits).ok());
  }
  EXPECT_LT(RelativeError(piece_logits, whole_logits), 1e-5);
}

TEST_F(NanoModelTest, ForwardBatchRejectsBadInputs) {
  auto a = model_->NewSequence();
  const std::vector<int32_t> ok = {1, 2}, bad = {1, int32_t(model_->config().vocab_size)};
  std::vector<float> logits;
  EXPECT_FALSE(model_->ForwardBatch({}, &logits).ok());
  const BatchInput empty[] = {{a.get(), {}, true}};
  EXPECT_FALSE(model_->ForwardBatch(empty, &logits).ok());
  const BatchInput twice[] = {{a.get(), ok, true}, {a.get(), ok, true}};
  EXPECT_FALSE(model_->ForwardBatch(twice, &logits).ok());
  const BatchInput outside[] = {{a.get(), bad, true}};
  EXPECT_FALSE(model_->ForwardBatch(outside, &logits).ok());
  EXPECT_EQ(a->length, 0);  // nothing ran
}

TEST_F(NanoModelTest, RejectsBadTokensAndDuplicateStates) {
  auto seq = model_->NewSequence();
  std::vector<float> logits;
  const int32_t bad = int32_t(model_->config().vocab_size);
  EXPECT_FALSE(model_->Prefill(*seq, std::span<const int32_t>(&bad, 1), LogitsRows::kAll, &logits).ok());
  EXPECT_FALSE(model_->Prefill(*seq, {}, LogitsRows::kAll, &logits).ok());
  SequenceState* twice[] = {seq.get(), seq.get()};
  const int32_t tokens[] = {1, 2};
  EXPECT_FALSE(model_->DecodeBatch(twice, tokens, &logits).ok());
}

// Rewrites the shard holding `victim`: without it (and without its index entry), or with its
// shape flattened to one dimension (same bytes, wrong shape).
enum class Damage { kRemove, kFlatten };

void DamageTensor(const std::string& dir, const std::string& victim, Damage damage) {
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  nlohmann::json index = nlohmann::json::parse(std::ifstream(index_path));
  const std::string stored = std::string(kPublishedPrefix) + victim;
  ASSERT_TRUE(index["weight_map"].contains(stored)) << stored;
  const std::string shard_name = index["weight_map"][stored];
  const fs::path shard_path = fs::path(dir) / shard_name;
  {
    auto shard = SafetensorsFile::Open(shard_path.string());
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    SafetensorsWriter writer;
    for (const TensorView& t : (*shard)->tensors()) {
      if (t.name == stored && damage == Damage::kRemove) continue;
      std::vector<int64_t> shape = t.shape;
      if (t.name == stored) shape = {t.numel()};
      ASSERT_TRUE(writer.Declare(t.name, t.dtype, shape).ok());
    }
    const fs::path tmp = shard_path.string() + ".new";
    ASSERT_TRUE(writer.Open(tmp.string()).ok());
    for (const TensorView& t : (*shard)->tensors()) {
      if (t.name == stored && damage == Damage::kRemove) continue;
      ASSERT_TRUE(writer.Append(t.data, t.bytes).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
    fs::rename(tmp, shard_path);
  }
  if (damage == Damage::kRemove) {
    index["weight_map"].erase(stored);
    std::ofstream(index_path) << index.dump(2);
  }
}

TEST(ModelLoadTest, MissingTensorIsNamed) {
  const std::string dir = NanoDir("missing");
  const std::string victim = "model.layers.1.self_attn.k_proj.weight";
  DamageTensor(dir, victim, Damage::kRemove);
  auto model = Model::Load(dir);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find(victim), std::string::npos) << model.status().ToString();
  EXPECT_NE(model.status().message().find(dir), std::string::npos) << model.status().ToString();
  fs::remove_all(dir);
}

TEST(ModelLoadTest, WrongShapeIsNamed) {
  const std::string dir = NanoDir("shape");
  const std::string victim = "model.layers.3.block_sparse_moe.experts.5.w2.weight_scale";
  DamageTensor(dir, victim, Damage::kFlatten);
  auto model = Model::Load(dir);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find(victim), std::string::npos) << model.status().ToString();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kimi

namespace kimi {
namespace {

std::string NumaFixture(const std::string& name) { return std::string(KIMI_NUMA_TESTDATA_DIR) + "/" + name; }

bool AnyLineHas(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Load reads the topology it is given and says what it did; on two nodes it plans threads and
// experts by node and either applies the plan (a machine with those CPUs and nodes) or says why
// not and runs unplaced (this one). The logits are the same either way.
TEST(ModelNumaTest, PlacementIsDecidedAtLoadAndChangesNoResult) {
  ASSERT_TRUE(kScalarKernels);
  const std::string dir = NanoDir("numa");
  const std::vector<int32_t> prompt = Tokens(20, 5, 4352);
  auto logits_of = [&](const std::string& root, std::vector<std::string>* decisions) {
    ModelOptions options;
    options.threads = 2;
    options.numa_root = root;
    auto model = Model::Load(dir, options);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    std::vector<float> logits;
    if (!model.ok()) return logits;
    *decisions = (*model)->PlacementDecisions();
    auto seq = (*model)->NewSequence();
    EXPECT_TRUE((*model)->Prefill(*seq, prompt, LogitsRows::kLast, &logits).ok());
    for (int step = 0; step < 3; ++step) {
      SequenceState* one[] = {seq.get()};
      const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      EXPECT_TRUE((*model)->DecodeBatch(one, std::span<const int32_t>(&next, 1), &logits).ok());
    }
    return logits;
  };
  std::vector<std::string> one_node, two_nodes, this_machine;
  const std::vector<float> unplaced = logits_of(NumaFixture("one_node"), &one_node);
  EXPECT_EQ(one_node.size(), 1u) << Joined(one_node);
  EXPECT_TRUE(AnyLineHas(one_node, "NUMA: one node with memory and CPUs, node 0 (CPUs 0-1")) << Joined(one_node);

  const std::vector<float> planned = logits_of(NumaFixture("two_nodes"), &two_nodes);
  EXPECT_TRUE(AnyLineHas(two_nodes, "node 0 (CPUs 0-7,16-23, 64.0 GiB): threads 0-0 pinned")) << Joined(two_nodes);
  EXPECT_TRUE(AnyLineHas(two_nodes, "node 1 (CPUs 8-15,24-31, 64.0 GiB): threads 1-1 pinned")) << Joined(two_nodes);
  EXPECT_TRUE(AnyLineHas(two_nodes, "experts 8-15 of every MoE layer")) << Joined(two_nodes);
  EXPECT_EQ(planned, unplaced);

  // A topology that cannot be read is named, and the model runs unplaced.
  std::vector<std::string> malformed;
  EXPECT_EQ(logits_of(NumaFixture("malformed"), &malformed), unplaced);
  EXPECT_TRUE(AnyLineHas(malformed, "NUMA: topology unreadable")) << Joined(malformed);
  EXPECT_TRUE(AnyLineHas(malformed, "node1/cpulist")) << Joined(malformed);

  // The real topology: whatever it is, Load says something about it.
  logits_of(ModelOptions{}.numa_root, &this_machine);
  EXPECT_TRUE(AnyLineHas(this_machine, "NUMA: ")) << Joined(this_machine);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kimi

// The MoE's thread split: a prefill of 256 tokens routed top-8 over 64 experts (2048 rows,
// 32 per expert) gives each of 2 threads whole experts rather than splitting every product of
// every expert over them; one thread never spreads; a few busy experts still split products.
namespace kimi::model {
namespace {

TEST(MoeSplit, PrefillOverManyExpertsTakesWholeExperts) {
  EXPECT_TRUE(MoeSpreadsWholeExperts(2048, 64, 2));
  EXPECT_TRUE(MoeSpreadsWholeExperts(64, 64, 2));    // decode: one row per expert
  EXPECT_FALSE(MoeSpreadsWholeExperts(2048, 64, 1));
  EXPECT_FALSE(MoeSpreadsWholeExperts(1024, 4, 2));  // 256 rows on each of 4 experts
}

}  // namespace
}  // namespace kimi::model
