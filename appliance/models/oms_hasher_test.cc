#include "models/oms_hasher.h"

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

}  // namespace
}  // namespace kimi::models
