// Replays the hand-made corpus in tests/fuzz/corpus through the fuzz entry point with the normal
// compiler: `good_*` files must parse, `bad_*` files must be rejected, and deterministic
// mutations of the good files (every truncation, byte flips across the header) must not crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "safetensors_fuzz_entry.h"

namespace kimi::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  const char* src = std::getenv("KIMI_SOURCE_DIR");
  return fs::path(src ? src : ".") / "tests" / "fuzz" / "corpus";
}

std::vector<uint8_t> Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(CorpusReplay, GoodFilesParseAndBadFilesAreRejected) {
  ASSERT_TRUE(fs::is_directory(CorpusDir())) << CorpusDir();
  int good = 0, bad = 0;
  for (const auto& entry : fs::directory_iterator(CorpusDir())) {
    std::string name = entry.path().filename().string();
    auto bytes = Read(entry.path());
    bool parsed = FuzzModelFilesOnce(bytes.data(), bytes.size());
    if (name.rfind("good_", 0) == 0) {
      EXPECT_TRUE(parsed) << name;
      ++good;
    } else if (name.rfind("bad_", 0) == 0) {
      EXPECT_FALSE(parsed) << name;
      ++bad;
    }
  }
  EXPECT_GE(good, 2);
  EXPECT_GE(bad, 10);
}

TEST(CorpusReplay, MutationsOfGoodFilesNeverCrash) {
  for (const auto& entry : fs::directory_iterator(CorpusDir())) {
    if (entry.path().filename().string().rfind("good_", 0) != 0) continue;
    auto bytes = Read(entry.path());
    for (size_t n = 0; n < bytes.size(); ++n) FuzzModelFilesOnce(bytes.data(), n);
    for (size_t i = 0; i < bytes.size() && i < 512; ++i) {
      for (uint8_t flip : {0x01, 0x10, 0x80, 0xff}) {
        auto mutated = bytes;
        mutated[i] ^= flip;
        FuzzModelFilesOnce(mutated.data(), mutated.size());
      }
    }
  }
}

}  // namespace
}  // namespace kimi::fuzz
