#include "models/model_copy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "models/oms_encoding.h"
#include "models/oms_test_support.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(ModelCopyTest, CopiesTheTreeByteForByteWithProgress) {
  TempDir dir;
  fs::create_directories(dir / "src/a/b");
  fs::create_directories(dir / "src/empty");
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 + 7);
  testing::WriteFile(dir / "src/big.bin", big);
  testing::WriteFile(dir / "src/a/b/small.txt", "small");
  testing::WriteFile(dir / "src/zero", "");
  uint64_t last_done = 0, total = 0;
  bool finished = false;
  CopyOptions options;
  options.buffer_bytes = 1 << 20;
  options.progress_interval = std::chrono::milliseconds(0);  // every chunk
  options.progress = [&](const HashProgress& p) {
    EXPECT_GE(p.bytes_done, last_done);
    last_done = p.bytes_done;
    total = p.bytes_total;
    finished = p.finished;
  };
  Result<CopyStats> stats = CopyModelTree(dir / "src", dir / "dst", options);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files, 3u);
  EXPECT_EQ(stats->bytes, big.size() + 5);
  EXPECT_EQ(total, stats->bytes);
  EXPECT_EQ(last_done, stats->bytes);
  EXPECT_TRUE(finished);
  EXPECT_EQ(testing::ReadFile(dir / "dst/big.bin"), big);
  EXPECT_EQ(testing::ReadFile(dir / "dst/a/b/small.txt"), "small");
  EXPECT_TRUE(fs::exists(dir / "dst/zero"));
  EXPECT_TRUE(fs::is_directory(dir / "dst/empty"));
  // The copy is read-only for its owner and closed to everybody else.
  for (const char* file : {"dst/big.bin", "dst/a/b/small.txt", "dst/zero"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir / file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 07777, 0400u) << file;
  }
  for (const char* sub : {"dst", "dst/a", "dst/a/b", "dst/empty"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir / sub).c_str(), &st), 0) << sub;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << sub;
  }

  EXPECT_EQ(CopyModelTree(dir / "src", dir / "dst", {}).status().code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(CopyModelTree(dir / "absent", dir / "dst2", {}).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(CopyModelTree(dir / "src/big.bin", dir / "dst3", {}).status().code(), Status::Code::kInvalidArgument);
}

TEST(ModelCopyTest, HashesEveryRangeItWritesInTheSameRead) {
  TempDir dir;
  fs::create_directories(dir / "src/sub");
  std::string weights(2500, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>(i * 17 + 3);
  testing::WriteFile(dir / "src/sub/weights.bin", weights);
  testing::WriteFile(dir / "src/empty", "");
  for (uint64_t shard_size : {uint64_t{0}, uint64_t{1000}}) {
    SCOPED_TRACE(shard_size);
    CopyOptions options;
    options.shard_size = shard_size;
    options.buffer_bytes = 4096;
    options.threads = 2;
    std::string out = "dst" + std::to_string(shard_size);
    Result<CopyStats> stats = CopyModelTree(dir / "src", dir / out, options);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(testing::ReadFile(dir / (out + "/sub/weights.bin")), weights);
    std::map<std::string, std::string> expected;
    expected[RangeKey("empty", 0, 0)] = testing::Sha256Hex("");
    if (shard_size == 0) {
      expected[RangeKey("sub/weights.bin", 0, 2500)] = testing::Sha256Hex(weights);
    } else {
      for (uint64_t start = 0; start < weights.size(); start += shard_size) {
        uint64_t length = std::min<uint64_t>(shard_size, weights.size() - start);
        expected[RangeKey("sub/weights.bin", start, length)] = testing::Sha256Hex(weights.substr(start, length));
      }
    }
    std::map<std::string, std::string> got;
    for (const auto& [key, digest] : stats->digests) got[key] = HexEncode(digest);
    EXPECT_EQ(got, expected);
  }
}

TEST(ModelCopyTest, StopsWhenCancelled) {
  TempDir dir;
  fs::create_directories(dir / "src");
  testing::WriteFile(dir / "src/weights.bin", std::string(1 << 20, 'w'));
  std::atomic<bool> cancel{true};
  CopyOptions options;
  options.cancel = &cancel;
  Result<CopyStats> stopped = CopyModelTree(dir / "src", dir / "dst", options);
  EXPECT_EQ(stopped.status().code(), Status::Code::kCancelled);
  cancel.store(false);
  EXPECT_TRUE(CopyModelTree(dir / "src", dir / "dst2", options).ok());
}

TEST(ModelCopyTest, RefusesSymlinksAndSpecialFilesBeforeWriting) {
  TempDir dir;
  fs::create_directories(dir / "src");
  testing::WriteFile(dir / "src/weights.bin", "w");
  fs::create_symlink("/etc/passwd", dir / "src/link");
  Result<CopyStats> linked = CopyModelTree(dir / "src", dir / "dst", {});
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(linked.status().message().find("link"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "dst"));

  fs::remove(dir / "src/link");
  ASSERT_EQ(mkfifo((dir / "src/fifo").c_str(), 0600), 0);
  Result<CopyStats> fifo = CopyModelTree(dir / "src", dir / "dst", {});
  EXPECT_EQ(fifo.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(fifo.status().message().find("fifo"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "dst"));
}

}  // namespace
}  // namespace kimi::models
