// Which matrices a quantization_config quantises, and in what format: compressed-tensors'
// matching order (ignore, then exact names, regexes from the start, the Linear class), the
// published config (routed experts only), the configs `kimi-engine quantize` writes, and the
// refusals (unsupported schemes, bad regexes, experts outside MXFP4, widths that do not pack).
#include "kimi/quantization.h"

#include <gtest/gtest.h>

#include "io/k3_presets.h"
#include "kimi/config.h"
#include "kimi/k3_tensors.h"

namespace kimi {
namespace {

QuantizationGroup Group(std::string name, std::string format, std::vector<std::string> targets) {
  QuantizationGroup g;
  g.name = std::move(name);
  g.format = std::move(format);
  g.targets = std::move(targets);
  return g;
}

QuantizationGroup Int8Group(std::vector<std::string> targets) {
  QuantizationGroup g = Group("group_1", std::string(kIntPackFormat), std::move(targets));
  g.num_bits = 8;
  g.type = "int";
  g.strategy = "channel";
  g.group_size = 0;
  return g;
}

QuantizationConfig Config(std::vector<std::string> ignore, std::vector<QuantizationGroup> groups) {
  QuantizationConfig q;
  q.present = true;
  q.quant_method = "compressed-tensors";
  q.format = std::string(kMixedPrecisionFormat);
  q.ignore = std::move(ignore);
  q.groups = std::move(groups);
  return q;
}

TEST(Quantization, PresetsQuantiseTheRoutedExpertsOnly) {
  auto c = K3Preset("k3-nano");
  ASSERT_TRUE(c.ok());
  const QuantizationMatcher m(c->quantization);
  EXPECT_EQ(m.FormatOf("model.layers.1.block_sparse_moe.experts.3.w2"), MatrixFormat::kMxfp4);
  for (const char* dense : {"model.layers.0.self_attn.q_proj", "model.layers.1.mlp.down_proj",
                            "model.layers.2.block_sparse_moe.shared_experts.up_proj",
                            "model.layers.2.block_sparse_moe.routed_expert_up_proj", "lm_head"}) {
    EXPECT_EQ(m.FormatOf(dense), MatrixFormat::kBf16) << dense;
  }
  size_t packed = 0;
  ForEachK3Tensor(*c, [&](const TensorSpec& s) {
    if (s.name.find("weight_packed") != std::string::npos) {
      EXPECT_EQ(s.group, TensorGroup::kRoutedExperts) << s.name;
      ++packed;
    }
  });
  EXPECT_GT(packed, 0u);
}

TEST(Quantization, MatchesIgnoreThenExactThenRegexThenLinear) {
  const QuantizationConfig q = Config(
      {"re:.*kv_b_proj$"},
      {Group("experts", std::string(kMxfp4PackFormat), {std::string(kRoutedExpertsTarget)}),
       Int8Group({"Linear"}),
       Group("named", std::string(kMxfp4PackFormat), {"model.layers.0.self_attn.o_proj", "re:.*self_attn\\.q_proj$"})});
  ASSERT_TRUE(ValidateQuantization(q, "q: ").ok());
  const QuantizationMatcher m(q);
  EXPECT_EQ(m.FormatOf("model.layers.0.self_attn.kv_b_proj"), MatrixFormat::kBf16);        // ignored
  EXPECT_EQ(m.FormatOf("model.layers.0.self_attn.o_proj"), MatrixFormat::kMxfp4);          // exact name
  EXPECT_EQ(m.FormatOf("language_model.model.layers.0.self_attn.o_proj"), MatrixFormat::kMxfp4);
  EXPECT_EQ(m.FormatOf("model.layers.1.self_attn.o_proj"), MatrixFormat::kInt8Channel);    // Linear
  EXPECT_EQ(m.FormatOf("model.layers.5.self_attn.q_proj"), MatrixFormat::kMxfp4);          // regex
  EXPECT_EQ(m.FormatOf("model.layers.5.self_attn.q_proj_extra"), MatrixFormat::kInt8Channel);
  EXPECT_EQ(m.FormatOf("model.layers.1.block_sparse_moe.experts.0.w1"), MatrixFormat::kMxfp4);
}

TEST(Quantization, ConfigWithQuantisedDenseRoundTripsAndChangesTheTensorTable) {
  auto c = K3Preset("k3-nano");
  ASSERT_TRUE(c.ok());
  c->quantization = Config({"lm_head", "re:.*block_sparse_moe\\.gate$"},
                           {Group("group_0", std::string(kMxfp4PackFormat), {std::string(kRoutedExpertsTarget)}),
                            Int8Group({"re:.*self_attn\\.(q|k|v|o)_proj$"})});
  auto parsed = ParseK3Config(K3ConfigToJson(*c), "config.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->quantization.groups.size(), 2u);
  EXPECT_EQ(parsed->quantization.groups[1].format, kIntPackFormat);
  EXPECT_EQ(parsed->quantization.groups[1].strategy, "channel");
  EXPECT_EQ(parsed->quantization.ignore, c->quantization.ignore);
  bool int8_q = false, bf16_f_a = false;
  ForEachK3Tensor(*parsed, [&](const TensorSpec& s) {
    if (s.name == "model.layers.0.self_attn.q_proj.weight_packed") {
      int8_q = s.dtype == DType::kI32 && s.shape == std::vector<int64_t>{s.shape[0], c->hidden_size / 4};
    }
    bf16_f_a |= s.name == "model.layers.0.self_attn.f_a_proj.weight" && s.dtype == DType::kBF16;
  });
  EXPECT_TRUE(int8_q);
  EXPECT_TRUE(bf16_f_a);
}

TEST(Quantization, RefusesWhatTheEngineCannotRead) {
  auto reject = [](const QuantizationConfig& q, Status::Code code, const std::string& words) {
    auto c = K3Preset("k3-nano");
    ASSERT_TRUE(c.ok());
    c->quantization = q;
    Status s = ValidateK3Config(*c, "config.json: ");
    ASSERT_FALSE(s.ok()) << words;
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(words), std::string::npos) << s.ToString();
  };
  const QuantizationGroup experts = Group("group_0", std::string(kMxfp4PackFormat), {std::string(kRoutedExpertsTarget)});
  QuantizationGroup int4 = Int8Group({"Linear"});
  int4.num_bits = 4;
  reject(Config({}, {experts, int4}), Status::Code::kUnimplemented, "8-bit symmetric int per channel");
  reject(Config({}, {experts, Group("g", "nvfp4-pack-quantized", {"Linear"})}), Status::Code::kUnimplemented,
         "nvfp4-pack-quantized");
  reject(Config({"re:(unclosed"}, {experts}), Status::Code::kInvalidArgument, "not a valid regular expression");
  reject(Config({}, {Int8Group({"Linear"})}), Status::Code::kInvalidArgument, "routed experts");
  // q_b_proj takes q_lora_rank inputs: 48 does not pack into MXFP4 blocks of 32.
  auto narrow = K3Preset("k3-nano");
  ASSERT_TRUE(narrow.ok());
  narrow->q_lora_rank = 48;
  narrow->quantization = Config({}, {experts, Group("dense", std::string(kMxfp4PackFormat), {"re:.*q_b_proj$"})});
  Status s = ValidateK3Config(*narrow, "config.json: ");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("q_b_proj: 48 inputs are not a multiple of 32"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace kimi
