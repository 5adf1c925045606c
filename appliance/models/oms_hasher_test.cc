#include "models/oms_hasher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "models/oms_encoding.h"
#include "models/oms_test_support.h"

namespace kimi::models {
namespace {

TEST(HasherTest, KnownDigestsOfWholeFilesAndRanges) {
  testing::TempDir dir;
  testing::WriteFile(dir / "abc", "abc");
  testing::WriteFile(dir / "shard", "0123abcd");
  testing::WriteFile(dir / "empty", "");
  std::vector<HashRange> ranges = {{dir / "abc", 0, 3, true}, {dir / "shard", 4, 4, true}, {dir / "empty", 0, 0, true}};
  auto digests = HashRanges(ranges, {});
  ASSERT_TRUE(digests.ok()) << digests.status().ToString();
  EXPECT_EQ(HexEncode((*digests)[0]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexEncode((*digests)[1]), "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589");
  EXPECT_EQ(HexEncode((*digests)[2]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(HasherTest, ParallelMatchesTheSerialReferenceWithSmallBuffers) {
  testing::TempDir dir;
  std::vector<HashRange> ranges;
  for (int f = 0; f < 5; ++f) {
    std::string bytes;
    for (int i = 0; i < 10000 + f * 777; ++i) bytes += static_cast<char>((i * 31 + f) & 0xff);
    std::string name = "f";
    name += std::to_string(f);  // (not "f" + ...: GCC 12 warns falsely about that form)
    std::string path = dir / name;
    testing::WriteFile(path, bytes);
    for (uint64_t start = 0; start < bytes.size(); start += 3000) {
      uint64_t end = std::min<uint64_t>(bytes.size(), start + 3000);
      ranges.push_back({path, start, end - start, end == bytes.size()});
    }
  }
  HashOptions options;
  options.threads = 3;
  options.buffer_bytes = 4096;  // many reads per range
  uint64_t last_done = 0;
  bool saw_finished = false;
  options.progress = [&](const HashProgress& p) {
    EXPECT_GE(p.bytes_done, last_done);
    last_done = p.bytes_done;
    if (p.finished) {
      saw_finished = true;
      EXPECT_EQ(p.bytes_done, p.bytes_total);
    }
  };
  std::vector<double> worker_cpu;
  options.worker_cpu_seconds = &worker_cpu;
  auto parallel = HashRanges(ranges, options);
  auto serial = HashRangesSerial(ranges, 1 << 20);
  ASSERT_TRUE(parallel.ok());
  ASSERT_TRUE(serial.ok());
  EXPECT_EQ(*parallel, *serial);
  EXPECT_TRUE(saw_finished);
  ASSERT_EQ(worker_cpu.size(), 3u);  // one CPU time per worker, for the benchmark
  for (double seconds : worker_cpu) EXPECT_GE(seconds, 0.0);
}

TEST(HasherTest, MissingShortAndGrownFilesAreErrorsNamingTheFile) {
  testing::TempDir dir;
  testing::WriteFile(dir / "f", "12345");
  auto missing = HashRanges({{dir / "nope", 0, 1, true}}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  auto shorter = HashRanges({{dir / "f", 0, 9, true}}, {});
  ASSERT_FALSE(shorter.ok());
  EXPECT_NE(shorter.status().message().find("shorter than expected"), std::string::npos);
  auto longer = HashRanges({{dir / "f", 0, 4, true}}, {});
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.status().message().find("longer than expected"), std::string::npos);
  EXPECT_TRUE(HashRanges({{dir / "f", 0, 4, false}}, {}).ok());  // a shard may end before EOF
}

// What was planned (listed by a copy or a verification) and swapped before it is hashed: a FIFO
// held the hashing worker in open() for ever, a link was followed to bytes outside the model.
// Both are refused at once, naming the file.
TEST(HasherTest, APlannedFileSwappedForAFifoOrALinkIsRefused) {
  testing::TempDir dir;
  testing::WriteFile(dir / "outside", "12345");
  testing::WriteFile(dir / "f", "12345");
  const std::vector<HashRange> planned = {{dir / "f", 0, 5, true}};
  ASSERT_TRUE(HashRanges(planned, {}).ok());

  ASSERT_EQ(::unlink((dir / "f").c_str()), 0);
  ASSERT_EQ(::mkfifo((dir / "f").c_str(), 0600), 0);
  Result<std::vector<std::string>> fifo = Status::Internal("not run");
  EXPECT_TRUE(testing::ReturnsWithin(
      std::chrono::seconds(20), [&] { fifo = HashRanges(planned, {}); },
      [&] { testing::ReleaseFifoReaders(dir / "f"); }));
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find(dir / "f"), std::string::npos) << fifo.status().ToString();

  ASSERT_EQ(::unlink((dir / "f").c_str()), 0);
  ASSERT_EQ(::symlink((dir / "outside").c_str(), (dir / "f").c_str()), 0);
  Result<std::vector<std::string>> link = HashRanges(planned, {});
  ASSERT_FALSE(link.ok()) << "the link was followed";
  EXPECT_NE(link.status().message().find(dir / "f"), std::string::npos) << link.status().ToString();
}

// A copy names the file it listed (HashRange::planned): another file renamed over its name, or
// the same file grown, is refused even when it is a regular file.
TEST(HasherTest, APlannedFileReplacedByAnotherIsRefused) {
  testing::TempDir dir;
  testing::WriteFile(dir / "f", "12345");
  Result<FileIdentity> seen = IdentityAt(dir / "f");
  ASSERT_TRUE(seen.ok());
  HashRange planned{dir / "f", 0, 5, true, "", *seen};
  ASSERT_TRUE(HashRanges({planned}, {}).ok());

  testing::WriteFile(dir / "other", "12345");
  ASSERT_EQ(::rename((dir / "other").c_str(), (dir / "f").c_str()), 0);
  Result<std::vector<std::string>> replaced = HashRanges({planned}, {});
  ASSERT_FALSE(replaced.ok());
  EXPECT_NE(replaced.status().message().find("replaced or changed"), std::string::npos)
      << replaced.status().ToString();

  planned.planned = IdentityAt(dir / "f").value();
  testing::WriteFile(dir / "f", "123456");  // in place: same inode, another size
  EXPECT_FALSE(HashRanges({planned}, {}).ok());
}

}  // namespace
}  // namespace kimi::models
