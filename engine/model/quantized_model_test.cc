// Quantised dense weights end to end: k3-nano synthesised in BF16, rewritten by
// QuantizeModelDir (io/k3_quantize.h) in each scheme, loaded by the engine and run on a 64-token
// prompt beside the BF16 model.
//
// Exactness: before quantising, every BF16 matrix is moved onto the scheme's grid (int8: each
// row k·2^e with |k| <= 127 and some |k| = 127; MXFP4: each block of 32 E2M1·2^e with some
// |code| = 6), so quantising loses nothing and the quantised model holds the same numbers as the
// BF16 one. On the scalar kernels (double sums) the logits must then agree to 1e-5 relative at
// every position and the greedy choices everywhere: any error in the format, the loader, the
// config matching or the kernels shows. (A bound on real quantisation noise cannot be tested on
// random weights: their routed layers' near-tied expert choices turn a 0.2% weight change into a
// different expert for some tokens, errors of order 1; docs/benchmarks.md has those figures.)
//
// Refusals (existing output, already-quantised input, missing or foreign directory) leave
// nothing behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "io/k3_quantize.h"
#include "io/test_util.h"
#include "kimi/model.h"
#include "kimi/dtype.h"
#include "kimi/model_dir.h"
#include "kimi/safetensors.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

// Forced at first use: the exactness needs the double-accumulating reference kernels.
const bool kScalarKernels = [] { return setenv("KIMI_KERNELS", "scalar", /*overwrite=*/1) == 0; }();

// Moves n values onto the int8 row grid: k·2^e, |k| <= 127, the largest |k| exactly 127.
void Int8Grid(float* w, int64_t n) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
  if (amax == 0) return;
  const float step = std::ldexp(1.0f, int(std::ceil(std::log2(amax / 127.0f))));
  int64_t top = 0;
  for (int64_t i = 0; i < n; ++i) {
    w[i] = std::clamp(std::nearbyint(w[i] / step), -127.0f, 127.0f) * step;
    if (std::fabs(w[i]) > std::fabs(w[top])) top = i;
  }
  w[top] = std::copysign(127.0f * step, w[top]);
}

// Moves each block of 32 onto the MXFP4 grid with the block's largest value at ±6·2^e.
void Mxfp4Grid(float* w, int64_t n) {
  for (int64_t b = 0; b + kMxfp4BlockSize <= n; b += kMxfp4BlockSize) {
    uint8_t packed[kMxfp4BlockSize / 2];
    const float scale = E8M0ToF32(QuantizeMxfp4Block(w + b, packed));
    int64_t top = b;
    for (int64_t i = 0; i < kMxfp4BlockSize; ++i) {
      w[b + i] = E2M1ToF32(i % 2 ? packed[i / 2] >> 4 : packed[i / 2] & 15) * scale;
      if (std::fabs(w[b + i]) > std::fabs(w[top])) top = b + i;
    }
    w[top] = std::copysign(6.0f * scale, w[top]);
  }
}

// Rewrites every 2-D BF16 tensor of `dir` row by row through `grid`, in place.
void MoveOntoGrid(const std::string& dir, void (*grid)(float*, int64_t)) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".safetensors") continue;
    std::vector<uint8_t> bytes;
    {
      auto file = SafetensorsFile::Open(e.path().string());
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      bytes.assign((*file)->mapped_data(), (*file)->mapped_data() + (*file)->mapped_size());
      for (const TensorView& t : (*file)->tensors()) {
        if (t.dtype != DType::kBF16 || t.shape.size() != 2) continue;
        uint8_t* data = bytes.data() + (static_cast<const uint8_t*>(t.data) - (*file)->mapped_data());
        std::vector<float> row(t.shape[1]);
        for (int64_t r = 0; r < t.shape[0]; ++r) {
          uint8_t* p = data + 2 * r * t.shape[1];
          for (int64_t k = 0; k < t.shape[1]; ++k) row[k] = Bf16ToF32(uint16_t(p[2 * k] | p[2 * k + 1] << 8));
          grid(row.data(), t.shape[1]);
          for (int64_t k = 0; k < t.shape[1]; ++k) {
            const uint16_t b = F32ToBf16(row[k]);
            ASSERT_EQ(Bf16ToF32(b), row[k]) << t.name << ": the grid value is not a BF16 number";
            p[2 * k] = uint8_t(b), p[2 * k + 1] = uint8_t(b >> 8);
          }
        }
      }
    }
    testing_util::WriteFile(e.path().string(), bytes);
  }
}

struct Agreement {
  double max_relative_error = 0;  // max over positions of max|a − b| / max|b|
  double greedy_agreement = 0;    // fraction of positions whose argmax is the same
};

Agreement Compare(const std::vector<float>& got, const std::vector<float>& want, int64_t vocab) {
  Agreement a;
  const int64_t rows = int64_t(want.size()) / vocab;
  int64_t same = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = got.data() + r * vocab;
    const float* w = want.data() + r * vocab;
    double diff = 0, scale = 0;
    for (int64_t v = 0; v < vocab; ++v) {
      diff = std::max(diff, double(std::fabs(g[v] - w[v])));
      scale = std::max(scale, double(std::fabs(w[v])));
    }
    a.max_relative_error = std::max(a.max_relative_error, diff / scale);
    same += std::max_element(g, g + vocab) - g == std::max_element(w, w + vocab) - w;
  }
  a.greedy_agreement = double(same) / double(rows);
  return a;
}

std::vector<int32_t> Prompt(int n, int64_t vocab) {
  std::vector<int32_t> t(n);
  uint32_t seed = 12345;
  for (auto& x : t) x = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(vocab);
  return t;
}

Result<std::vector<float>> AllLogits(const std::string& dir, const std::vector<int32_t>& prompt) {
  ModelOptions options;
  options.threads = 1;
  KIMI_ASSIGN_OR_RETURN(auto model, Model::Load(dir, options));
  auto seq = model->NewSequence();
  std::vector<float> logits;
  KIMI_RETURN_IF_ERROR(model->Prefill(*seq, prompt, LogitsRows::kAll, &logits));
  return logits;
}

class QuantizedModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kScalarKernels);
    auto dir = testing_util::WriteTestModel("quantized_bf16", "k3-nano", 7);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    bf16_ = new std::string(*dir);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*bf16_);
    delete bf16_;
  }

  // Quantises a grid copy of the k3-nano model and compares the two models' logits.
  void ExpectExact(QuantScheme scheme, void (*grid)(float*, int64_t), const char* name) {
    const std::string parent = testing_util::MakeTempDir(std::string("quantized_") + name);
    const std::string source = parent + "/bf16", out = parent + "/quantized";
    fs::copy(*bf16_, source);
    MoveOntoGrid(source, grid);
    auto summary = QuantizeModelDir(source, out, scheme);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_GT(summary->matrices, 0);
    EXPECT_LT(summary->bytes_after, summary->bytes_before);

    auto dir = ModelDir::Open(out);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    const int64_t vocab = (*dir)->config().vocab_size;
    for (const char* module : {"model.layers.0.self_attn.q_proj", "model.layers.1.block_sparse_moe.shared_experts.down_proj"}) {
      auto q = (*dir)->Tensor(std::string(module) + ".weight_packed");
      ASSERT_TRUE(q.ok()) << q.status().ToString();
      EXPECT_EQ((*q)->dtype, scheme == QuantScheme::kInt8 ? DType::kI32 : DType::kU8);
      EXPECT_FALSE((*dir)->Tensor(std::string(module) + ".weight").ok());
    }
    EXPECT_TRUE((*dir)->Tensor("model.embed_tokens.weight").ok());  // embeddings stay BF16

    const std::vector<int32_t> prompt = Prompt(64, vocab);
    auto want = AllLogits(source, prompt);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto got = AllLogits(out, prompt);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const Agreement a = Compare(*got, *want, vocab);
    std::printf("%s on k3-nano (grid weights), 64 positions: max relative logit error %.2e, greedy agreement %.3f\n",
                name, a.max_relative_error, a.greedy_agreement);
    EXPECT_LE(a.max_relative_error, 1e-5);
    EXPECT_EQ(a.greedy_agreement, 1.0);
    fs::remove_all(parent);
  }

  static std::string* bf16_;
};
std::string* QuantizedModelTest::bf16_ = nullptr;

TEST_F(QuantizedModelTest, Int8ModelComputesWhatItsBf16TwinComputes) {
  ExpectExact(QuantScheme::kInt8, Int8Grid, "int8");
}

TEST_F(QuantizedModelTest, Mxfp4DenseModelComputesWhatItsBf16TwinComputes) {
  ExpectExact(QuantScheme::kMxfp4Dense, Mxfp4Grid, "mxfp4-dense");
}

// Every refusal names its reason and leaves neither the output nor a partial directory.
TEST_F(QuantizedModelTest, RefusalsLeaveNothingBehind) {
  const std::string parent = testing_util::MakeTempDir("quantized_refusals");
  const std::string out = parent + "/out";
  auto expect_refused = [&](const std::string& in, const std::string& to, Status::Code code, const std::string& words) {
    auto r = QuantizeModelDir(in, to, QuantScheme::kInt8);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().ToString();
  };
  expect_refused(parent + "/missing", out, Status::Code::kNotFound, "no such model directory");
  fs::create_directories(parent + "/foreign");
  testing_util::WriteText(parent + "/foreign/config.json", R"({"model_type": "llama"})");
  expect_refused(parent + "/foreign", out, Status::Code::kInvalidArgument, "not a Kimi K3 model directory");
  fs::create_directories(parent + "/taken");
  expect_refused(*bf16_, parent + "/taken", Status::Code::kAlreadyExists, "already exists");

  ASSERT_TRUE(QuantizeModelDir(*bf16_, parent + "/int8", QuantScheme::kInt8).ok());
  expect_refused(parent + "/int8", out, Status::Code::kInvalidArgument, "already quantised");
  auto unknown = ParseQuantScheme("int4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("int8 or mxfp4-dense"), std::string::npos);

  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(parent)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"foreign", "int8", "taken"}));
  fs::remove_all(parent);
}

}  // namespace
}  // namespace kimi
