#include "io/k3_synth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "io/k3_presets.h"
#include "io/test_util.h"
#include "kimi/k3_tensors.h"
#include "kimi/model_dir.h"
#include "kimi/model_size.h"

namespace kimi {
namespace {

K3Config Nano() { return *K3Preset("k3-nano"); }

// Writes k3-nano once for the whole suite.
class NanoModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing_util::MakeTempDir("nano"));
    auto r = WriteSyntheticModel(Nano(), *dir_, {/*seed=*/7, /*max_shard_bytes=*/1 << 20});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    summary_ = *r;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string* dir_;
  static SynthSummary summary_;
};
std::string* NanoModel::dir_ = nullptr;
SynthSummary NanoModel::summary_;

std::vector<float> ReadFloats(const TensorView& v) {
  std::vector<float> out(v.numel());
  for (size_t i = 0; i < out.size(); ++i) {
    if (v.dtype == DType::kBF16) {
      uint16_t b;
      std::memcpy(&b, static_cast<const uint8_t*>(v.data) + 2 * i, 2);
      out[i] = Bf16ToF32(b);
    } else {
      std::memcpy(&out[i], static_cast<const uint8_t*>(v.data) + 4 * i, 4);
    }
  }
  return out;
}

double StdDev(const std::vector<float>& x) {
  double s = 0, s2 = 0;
  for (float v : x) {
    s += v;
    s2 += double(v) * v;
  }
  double m = s / x.size();
  return std::sqrt(s2 / x.size() - m * m);
}

TEST_F(NanoModel, ReopensWithEveryTensorOfTheTable) {
  auto dir = ModelDir::Open(*dir_);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ((*dir)->name_prefix(), "language_model.");
  EXPECT_GT((*dir)->shard_files().size(), 1u);  // 1 MiB shards: the index really is used
  EXPECT_EQ(summary_.shards, static_cast<int>((*dir)->shard_files().size()));
  ASSERT_TRUE((*dir)->ValidateLayout().ok());
  auto layout = K3TensorLayout((*dir)->config());
  EXPECT_EQ((*dir)->tensor_count(), layout.size());
  EXPECT_EQ(summary_.tensors, layout.size());
  for (const auto& spec : layout) {
    auto t = (*dir)->Tensor(spec.name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ((*t)->dtype, spec.dtype) << spec.name;
    EXPECT_EQ((*t)->shape, spec.shape) << spec.name;
  }
  EXPECT_EQ(summary_.bytes, ComputeK3Sizes(Nano()).total.bytes);
}

TEST_F(NanoModel, ConfigReparsesToThePreset) {
  auto dir = ModelDir::Open(*dir_);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(K3ConfigToJson((*dir)->config()), K3ConfigToJson(Nano()));
}

TEST_F(NanoModel, PublishedNamesAndDtypes) {
  auto dir = ModelDir::Open(*dir_);
  ASSERT_TRUE(dir.ok());
  struct Want {
    const char* name;
    DType dtype;
  };
  for (Want w : {Want{"model.embed_tokens.weight", DType::kBF16},
                 Want{"model.layers.0.mlp.gate_proj.weight", DType::kBF16},
                 Want{"model.layers.0.self_attn.q_conv1d.weight", DType::kF32},
                 Want{"model.layers.0.self_attn.A_log", DType::kF32},
                 Want{"model.layers.3.self_attn.kv_a_proj_with_mqa.weight", DType::kBF16},
                 Want{"model.layers.1.block_sparse_moe.gate.e_score_correction_bias", DType::kF32},
                 Want{"model.layers.1.block_sparse_moe.experts.15.w2.weight_packed", DType::kU8},
                 Want{"model.layers.1.block_sparse_moe.experts.0.w1.weight_scale", DType::kU8},
                 Want{"model.layers.5.block_sparse_moe.routed_expert_norm.weight", DType::kBF16},
                 Want{"model.layers.2.self_attention_res_proj.weight", DType::kBF16},
                 Want{"model.output_attn_res_proj.weight", DType::kBF16},
                 Want{"lm_head.weight", DType::kBF16}}) {
    auto t = (*dir)->Tensor(w.name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ((*t)->dtype, w.dtype) << w.name;
    EXPECT_EQ((*t)->name, std::string("language_model.") + w.name);
  }
  EXPECT_EQ((*dir)->Tensor("model.layers.3.self_attn.A_log").status().code(), Status::Code::kNotFound);
}

TEST_F(NanoModel, WeightsAreScaledForSaneActivations) {
  auto dir = ModelDir::Open(*dir_);
  ASSERT_TRUE(dir.ok());
  auto q = (*dir)->Tensor("model.layers.0.self_attn.q_proj.weight");
  ASSERT_TRUE(q.ok());
  EXPECT_NEAR(StdDev(ReadFloats(**q)), 1.0 / std::sqrt(128.0), 0.01);
  auto norm = (*dir)->Tensor("model.layers.0.input_layernorm.weight");
  ASSERT_TRUE(norm.ok());
  for (float v : ReadFloats(**norm)) EXPECT_TRUE(v >= 0.89f && v <= 1.11f) << v;
  // A_log: six live heads in log [1, 16], padded with zeros to eight.
  auto a = (*dir)->Tensor("model.layers.0.self_attn.A_log");
  ASSERT_TRUE(a.ok());
  auto a_log = ReadFloats(**a);
  ASSERT_EQ(a_log.size(), 8u);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(a_log[i] >= 0.0f && a_log[i] <= std::log(16.0f) + 1e-6f);
  EXPECT_EQ(a_log[6], 0.0f);
  EXPECT_EQ(a_log[7], 0.0f);
  // An MXFP4 expert decodes to a fan-in-scaled matrix.
  auto packed = (*dir)->Tensor("model.layers.2.block_sparse_moe.experts.3.w1.weight_packed");
  auto scale = (*dir)->Tensor("model.layers.2.block_sparse_moe.experts.3.w1.weight_scale");
  ASSERT_TRUE(packed.ok() && scale.ok());
  const int64_t rows = (*packed)->shape[0], cols = (*packed)->shape[1] * 2;
  std::vector<float> w;
  for (int64_t r = 0; r < rows; ++r) {
    auto* p = static_cast<const uint8_t*>((*packed)->data) + r * cols / 2;
    auto* s = static_cast<const uint8_t*>((*scale)->data) + r * cols / 32;
    for (int64_t i = 0; i < cols; ++i) w.push_back(Mxfp4Element(p, s, i));
  }
  EXPECT_NEAR(StdDev(w), 1.0 / std::sqrt(double(cols)), 0.3 / std::sqrt(double(cols)));
}

TEST_F(NanoModel, SameSeedSameBytesOtherSeedOtherBytes) {
  std::string again = testing_util::MakeTempDir("nano_again");
  std::string other = testing_util::MakeTempDir("nano_other");
  ASSERT_TRUE(WriteSyntheticModel(Nano(), again, {7, 1 << 20}).ok());
  ASSERT_TRUE(WriteSyntheticModel(Nano(), other, {8, 1 << 20}).ok());
  std::string shard = ShardFileName(0, summary_.shards);
  EXPECT_EQ(testing_util::ReadText(*dir_ + "/" + shard), testing_util::ReadText(again + "/" + shard));
  EXPECT_NE(testing_util::ReadText(*dir_ + "/" + shard), testing_util::ReadText(other + "/" + shard));
  std::filesystem::remove_all(again);
  std::filesystem::remove_all(other);
}

TEST_F(NanoModel, MatricesUnwrittenKeepTheLayoutAndTheVectors) {
  std::string holes = testing_util::MakeTempDir("nano_holes");
  SynthOptions options{7, 1 << 20};
  options.matrices_unwritten = true;
  auto r = WriteSyntheticModel(Nano(), holes, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->bytes, summary_.bytes);
  EXPECT_EQ(r->tensors, summary_.tensors);
  auto full = ModelDir::Open(*dir_);
  auto sparse = ModelDir::Open(holes);
  ASSERT_TRUE(full.ok() && sparse.ok());
  int matrices = 0, vectors = 0;
  for (const TensorSpec& spec : K3TensorLayout(Nano())) {
    const std::string& name = spec.name;
    auto ra = (*full)->Tensor(name);
    auto rb = (*sparse)->Tensor(name);
    ASSERT_TRUE(ra.ok() && rb.ok()) << name;
    const TensorView* a = *ra;
    const TensorView* b = *rb;
    ASSERT_EQ(a->bytes, b->bytes) << name;
    const auto* bytes = static_cast<const uint8_t*>(b->data);
    if (spec.shape.size() == 2) {
      ++matrices;
      EXPECT_TRUE(std::all_of(bytes, bytes + b->bytes, [](uint8_t x) { return x == 0; })) << name;
    } else {
      ++vectors;
      EXPECT_EQ(std::memcmp(a->data, b->data, a->bytes), 0) << name;
    }
  }
  EXPECT_GT(matrices, 0);
  EXPECT_GT(vectors, 0);
  std::filesystem::remove_all(holes);
}

TEST(ShapeOnly, IndexRecordsEveryTensorWithoutData) {
  std::string dir = testing_util::MakeTempDir("shape_only");
  auto r = WriteShapeOnlyModel(Nano(), dir, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->bytes, ComputeK3Sizes(Nano()).total.bytes);
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE((*m)->shape_only());
  EXPECT_TRUE((*m)->ValidateLayout().ok());
  EXPECT_EQ((*m)->Tensor("model.embed_tokens.weight").status().code(), Status::Code::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kimi
