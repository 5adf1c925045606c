#include "kimi/model_dir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "io/safetensors_writer.h"
#include "io/test_util.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

std::string Index(const std::string& dir) { return dir + "/model.safetensors.index.json"; }

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// A fresh k3-nano in one shard (fast to corrupt).
std::string FreshNano(const std::string& tag) {
  std::string dir = testing_util::MakeTempDir(tag);
  auto r = WriteSyntheticModel(*K3Preset("k3-nano"), dir, {1, 1ull << 30});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return dir;
}

TEST(ModelDir, ATensorNamedInTheIndexButAbsentFromItsShardIsCorruption) {
  std::string dir = FreshNano("md_missing");
  std::string shard = ShardFileName(0, 1);
  std::string text = testing_util::ReadText(Index(dir));
  text = Replace(text, "\"weight_map\": {", "\"weight_map\": {\n    \"language_model.model.ghost.weight\": \"" + shard + "\",");
  testing_util::WriteText(Index(dir), text);
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Status s = (*m)->ValidateIndex();
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find(shard), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("'language_model.model.ghost.weight'"), std::string::npos) << s.ToString();
  EXPECT_EQ((*m)->Tensor("model.ghost.weight").status().code(), Status::Code::kCorruption);
  fs::remove_all(dir);
}

// The served-bytes check hashes these: every shard, whole, as the tensors see it.
TEST(ModelDir, MappedShardsAreTheWholeFilesTheTensorsPointInto) {
  std::string dir = FreshNano("md_mapped");
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE((*m)->ValidateIndex().ok());
  std::vector<MappedWeightFile> mapped = (*m)->MappedShards();
  ASSERT_EQ(mapped.size(), (*m)->shard_files().size());
  for (const MappedWeightFile& f : mapped) {
    const std::string bytes = testing_util::ReadText(dir + "/" + f.file);
    ASSERT_EQ(f.size, bytes.size()) << f.file;
    EXPECT_EQ(std::memcmp(f.data, bytes.data(), bytes.size()), 0) << f.file;
  }
  auto tensor = (*m)->Tensor("model.norm.weight");
  ASSERT_TRUE(tensor.ok());
  const auto* at = static_cast<const uint8_t*>((*tensor)->data);
  EXPECT_GE(at, mapped[0].data);
  EXPECT_LE(at + (*tensor)->bytes, mapped[0].data + mapped[0].size);
  fs::remove_all(dir);
}

TEST(ModelDir, ATensorTheConfigNeedsButTheIndexLacksIsNamed) {
  std::string dir = FreshNano("md_lacks");
  std::string text = testing_util::ReadText(Index(dir));
  std::string line = "\"language_model.model.layers.3.self_attn.kv_b_proj.weight\": \"" + ShardFileName(0, 1) + "\",";
  testing_util::WriteText(Index(dir), Replace(text, line, ""));
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok());
  Status s = (*m)->ValidateLayout();
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("layers.3.self_attn.kv_b_proj.weight"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}

TEST(ModelDir, AShapeTheConfigDoesNotImplyIsNamed) {
  std::string dir = FreshNano("md_shape");
  // Claim a wider model than the shards hold.
  std::string config = testing_util::ReadText(dir + "/config.json");
  testing_util::WriteText(dir + "/config.json", Replace(config, "\"intermediate_size\": 384", "\"intermediate_size\": 512"));
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok());
  Status s = (*m)->ValidateLayout();
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("model.layers.0.mlp.gate_proj.weight"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("BF16[384, 128]"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}

TEST(ModelDir, RejectsHostileIndexes) {
  std::string dir = FreshNano("md_hostile");
  std::string good = testing_util::ReadText(Index(dir));
  const std::string shard = ShardFileName(0, 1);
  for (const std::string& bad :
       {Replace(good, "\"" + shard + "\"", "\"../../etc/passwd\""), Replace(good, "\"" + shard + "\"", "\"a/b.safetensors\""),
        Replace(good, "\"" + shard + "\"", "7"), std::string("{\"weight_map\": [1]}"), std::string("{\"weight_map\": {}}"),
        std::string("[]"), good.substr(0, good.size() / 2), std::string(1000, '{')}) {
    testing_util::WriteText(Index(dir), bad);
    auto m = ModelDir::Open(dir);
    ASSERT_FALSE(m.ok()) << bad.substr(0, 80);
    EXPECT_EQ(m.status().code(), Status::Code::kCorruption) << m.status().ToString();
    EXPECT_NE(m.status().message().find("model.safetensors.index.json"), std::string::npos) << m.status().ToString();
  }
  fs::remove_all(dir);
}

TEST(ModelDir, ACorruptShardIsReportedByFileAndTensor) {
  std::string dir = FreshNano("md_corrupt_shard");
  std::string path = dir + "/" + ShardFileName(0, 1);
  fs::resize_file(path, fs::file_size(path) - 100);  // the last tensor loses its tail
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok());
  Status s = (*m)->ValidateIndex();
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("lm_head.weight"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}

TEST(ModelDir, ReadsASingleUnprefixedFile) {
  std::string src = FreshNano("md_single_src");
  std::string dir = testing_util::MakeTempDir("md_single");
  fs::copy_file(src + "/config.json", dir + "/config.json");
  // Re-write the shard's tensors without the prefix into model.safetensors.
  auto from = ModelDir::Open(src);
  ASSERT_TRUE(from.ok());
  auto shard = SafetensorsFile::Open(src + "/" + ShardFileName(0, 1));
  ASSERT_TRUE(shard.ok());
  // Also use the legacy spelling of the attention-residual weights of early exports.
  auto rename = [](const std::string& stored) {
    std::string n = stored.substr(15);
    for (auto [from, to] : {std::pair{"_res_proj.weight", "_res.proj_weight"}, {"_res_norm.weight", "_res.norm_weight"}}) {
      auto pos = n.find(from);
      if (pos != std::string::npos) n.replace(pos, std::strlen(from), to);
    }
    return n;
  };
  SafetensorsWriter w;
  for (const auto& t : (*shard)->tensors()) ASSERT_TRUE(w.Declare(rename(t.name), t.dtype, t.shape).ok());
  ASSERT_TRUE(w.Open(dir + "/model.safetensors").ok());
  for (const auto& t : (*shard)->tensors()) ASSERT_TRUE(w.Append(t.data, t.bytes).ok());
  ASSERT_TRUE(w.Finish().ok());
  auto m = ModelDir::Open(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->name_prefix(), "");
  EXPECT_TRUE((*m)->ValidateLayout().ok());
  EXPECT_TRUE((*m)->Tensor("lm_head.weight").ok());
  auto res = (*m)->Tensor("model.layers.2.self_attention_res_proj.weight");
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ((*res)->name, "model.layers.2.self_attention_res.proj_weight");
  fs::remove_all(src);
  fs::remove_all(dir);
}

TEST(ModelDir, MissingPiecesAreNotFound) {
  std::string dir = testing_util::MakeTempDir("md_empty");
  EXPECT_EQ(ModelDir::Open(dir + "/nope").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ModelDir::Open(dir).status().code(), Status::Code::kNotFound);  // no config.json
  testing_util::WriteText(dir + "/config.json", K3ConfigToJson(*K3Preset("k3-nano")));
  auto m = ModelDir::Open(dir);  // no weights
  EXPECT_EQ(m.status().code(), Status::Code::kNotFound);
  EXPECT_NE(m.status().message().find("model.safetensors"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kimi
