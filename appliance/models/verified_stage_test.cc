#include "models/verified_stage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/model_store_test_support.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;
using testing::StoreFixture;

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class VerifiedStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fixture_.MakeSignedModel("model", "seed");
    manifest_ = fixture_.Verified(dir_);
    ASSERT_NE(manifest_, nullptr);
  }

  StoreFixture fixture_;
  std::string dir_;
  std::shared_ptr<const VerifiedManifest> manifest_;
};

// The engine's directory holds the verified bytes of every small signed file, links to the
// weight shards, and nothing the signature does not name; it goes with its object.
TEST_F(VerifiedStageTest, HoldsTheVerifiedFilesAndLinksToTheShards) {
  const std::string parent = fixture_.data_dir() + "/stages";
  std::string staged;
  {
    Result<std::unique_ptr<VerifiedStage>> stage = VerifiedStage::Create(*manifest_, dir_, parent);
    ASSERT_TRUE(stage.ok()) << stage.status().ToString();
    staged = (*stage)->path();
    struct stat st {};
    ASSERT_EQ(::stat(staged.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(Contents(fs::path(staged) / "config.json"), Contents(fs::path(dir_) / "config.json"));
    EXPECT_EQ(Contents(fs::path(staged) / "sub/tokenizer.model"), "tokens seed");
    EXPECT_FALSE(fs::is_symlink(fs::path(staged) / "config.json"));
    ASSERT_TRUE(fs::is_symlink(fs::path(staged) / "model-00001.safetensors"));
    EXPECT_EQ(Contents(fs::path(staged) / "model-00001.safetensors"),
              Contents(fs::path(dir_) / "model-00001.safetensors"));
    EXPECT_FALSE(fs::exists(fs::path(staged) / ".git"));  // ignored by the signature, not staged
  }
  EXPECT_FALSE(fs::exists(staged));
  EXPECT_TRUE(fs::is_empty(parent));
}

// A file swapped after verification (the engine once read it by name again) is refused, naming
// it, and nothing is left behind.
TEST_F(VerifiedStageTest, AFileChangedAfterVerificationIsRefused) {
  const std::string parent = fixture_.data_dir() + "/stages";
  for (const char* file : {"config.json", "sub/tokenizer.model"}) {
    const fs::path path = fs::path(dir_) / file;
    const std::string original = Contents(path);
    for (const std::string& swapped : {original + " ", std::string(original.size(), 'x'), std::string()}) {
      std::ofstream(fs::path(dir_) / "swap.tmp", std::ios::binary) << swapped;
      fs::rename(fs::path(dir_) / "swap.tmp", path);
      Result<std::unique_ptr<VerifiedStage>> stage = VerifiedStage::Create(*manifest_, dir_, parent);
      ASSERT_FALSE(stage.ok()) << file;
      EXPECT_EQ(stage.status().code(), Status::Code::kCorruption) << stage.status().ToString();
      EXPECT_NE(stage.status().message().find(file), std::string::npos) << stage.status().ToString();
      EXPECT_TRUE(fs::is_empty(parent));
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << original;
  }
  EXPECT_TRUE(VerifiedStage::Create(*manifest_, dir_, parent).ok());
}

// The choice between copying and linking was made from the size on disk at staging time: a
// small signed config.json replaced after verification by one sparsely grown past
// kMaxStagedFileBytes was linked, and the engine then read whatever the link named. It is made
// from the manifest now, and a copied file whose size is not its signed size is refused.
TEST_F(VerifiedStageTest, ASmallSignedFileGrownLargeIsRefusedNotLinked) {
  const std::string parent = fixture_.data_dir() + "/stages";
  const fs::path config = fs::path(dir_) / "config.json", grown = fs::path(dir_) / "grown.tmp";
  std::ofstream(grown, std::ios::binary) << Contents(config);
  ASSERT_EQ(::truncate(grown.c_str(), static_cast<off_t>(kMaxStagedFileBytes + 1)), 0);  // sparse
  fs::rename(grown, config);
  Result<std::unique_ptr<VerifiedStage>> stage = VerifiedStage::Create(*manifest_, dir_, parent);
  ASSERT_FALSE(stage.ok()) << "staged " << (*stage)->path() << " with config.json "
                           << (fs::is_symlink(fs::path((*stage)->path()) / "config.json") ? "linked"
                                                                                          : "copied");
  EXPECT_EQ(stage.status().code(), Status::Code::kCorruption) << stage.status().ToString();
  EXPECT_NE(stage.status().message().find("config.json"), std::string::npos) << stage.status().ToString();
  EXPECT_TRUE(fs::is_empty(parent));
}

// A weight shard renamed over after verification, with the same size and other bytes: the
// stage linked the shard's name, so the engine mapped, parsed and served the new file, unverified,
// until the served-bytes check after the load (paced: hours for a large model) found it.
TEST_F(VerifiedStageTest, AWeightShardRenamedOverAfterVerificationIsRefused) {
  const std::string parent = fixture_.data_dir() + "/stages";
  const fs::path shard = fs::path(dir_) / "model-00001.safetensors", other = fs::path(dir_) / "other.tmp";
  const std::string signed_bytes = Contents(shard);
  std::ofstream(other, std::ios::binary) << std::string(signed_bytes.size(), 'x');
  fs::rename(other, shard);
  Result<std::unique_ptr<VerifiedStage>> stage = VerifiedStage::Create(*manifest_, dir_, parent);
  ASSERT_FALSE(stage.ok()) << "the engine would read " << Contents(fs::path((*stage)->path()) / "model-00001.safetensors").substr(0, 8);
  EXPECT_EQ(stage.status().code(), Status::Code::kCorruption) << stage.status().ToString();
  EXPECT_NE(stage.status().message().find("model-00001.safetensors"), std::string::npos) << stage.status().ToString();
  EXPECT_TRUE(fs::is_empty(parent));

  // The same bytes in another file are refused too: what was verified is that file.
  std::ofstream(other, std::ios::binary) << signed_bytes;
  fs::rename(other, shard);
  EXPECT_EQ(VerifiedStage::Create(*manifest_, dir_, parent).status().code(), Status::Code::kCorruption);
}

// A shard renamed over after staging and before the engine opens it: the stage's link leads to
// the file that was verified, not to whatever the name names now.
TEST_F(VerifiedStageTest, TheStageLeadsToTheVerifiedShardWhateverItsNameNamesLater) {
  const std::string parent = fixture_.data_dir() + "/stages";
  const fs::path shard = fs::path(dir_) / "model-00001.safetensors", other = fs::path(dir_) / "other.tmp";
  const std::string signed_bytes = Contents(shard);
  Result<std::unique_ptr<VerifiedStage>> stage = VerifiedStage::Create(*manifest_, dir_, parent);
  ASSERT_TRUE(stage.ok()) << stage.status().ToString();
  std::ofstream(other, std::ios::binary) << std::string(signed_bytes.size(), 'x');
  fs::rename(other, shard);
  const std::string engine_reads = Contents(fs::path((*stage)->path()) / "model-00001.safetensors");
  EXPECT_TRUE(engine_reads == signed_bytes) << "the engine would read " << engine_reads.substr(0, 8);
}

// A FIFO renamed over a small signed file: staging waited in open() for a writer.
TEST_F(VerifiedStageTest, AFifoInPlaceOfASignedFileIsRefusedWithoutWaiting) {
  const std::string parent = fixture_.data_dir() + "/stages";
  const std::string tokenizer = dir_ + "/sub/tokenizer.model", fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::rename(fifo, tokenizer);
  Result<std::unique_ptr<VerifiedStage>> stage = Status::Internal("not run");
  EXPECT_TRUE(testing::ReturnsWithin(
      std::chrono::seconds(20), [&] { stage = VerifiedStage::Create(*manifest_, dir_, parent); },
      [&] { testing::ReleaseFifoReaders(tokenizer); }));
  ASSERT_FALSE(stage.ok());
  EXPECT_NE(stage.status().message().find("sub/tokenizer.model"), std::string::npos)
      << stage.status().ToString();
  EXPECT_TRUE(fs::is_empty(parent));
}

}  // namespace
}  // namespace kimi::models
