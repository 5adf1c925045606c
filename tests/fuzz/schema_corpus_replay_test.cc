// Replays tests/fuzz/schema_corpus through the schema fuzz entry point with the normal compiler:
// `good_*` schemas must compile, `bad_*` ones (the inputs that crashed or hung the daemon, and
// their siblings) must be refused, and deterministic mutations of the good ones (every
// truncation, byte flips) must neither crash nor hang.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "schema_fuzz_entry.h"

namespace kimi::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  const char* src = std::getenv("KIMI_SOURCE_DIR");
  return fs::path(src ? src : ".") / "tests" / "fuzz" / "schema_corpus";
}

std::vector<uint8_t> Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(SchemaCorpusReplay, GoodSchemasCompileAndBadOnesAreRefused) {
  ASSERT_TRUE(fs::is_directory(CorpusDir())) << CorpusDir();
  int good = 0, bad = 0;
  for (const auto& entry : fs::directory_iterator(CorpusDir())) {
    const std::string name = entry.path().filename().string();
    const std::vector<uint8_t> bytes = Read(entry.path());
    const bool compiled = FuzzSchemaOnce(bytes.data(), bytes.size());
    if (name.rfind("good_", 0) == 0) {
      EXPECT_TRUE(compiled) << name;
      ++good;
    } else if (name.rfind("bad_", 0) == 0) {
      EXPECT_FALSE(compiled) << name;
      ++bad;
    }
  }
  EXPECT_GE(good, 2);
  EXPECT_GE(bad, 6);
}

TEST(SchemaCorpusReplay, MutationsOfGoodSchemasNeverCrash) {
  for (const auto& entry : fs::directory_iterator(CorpusDir())) {
    if (entry.path().filename().string().rfind("good_", 0) != 0) continue;
    const std::vector<uint8_t> bytes = Read(entry.path());
    for (size_t n = 0; n < bytes.size(); ++n) FuzzSchemaOnce(bytes.data(), n);
    for (size_t i = 0; i < bytes.size() && i < 512; ++i) {
      for (uint8_t flip : {0x01, 0x10, 0x80, 0xff}) {
        std::vector<uint8_t> mutated = bytes;
        mutated[i] ^= flip;
        FuzzSchemaOnce(mutated.data(), mutated.size());
      }
    }
  }
}

}  // namespace
}  // namespace kimi::fuzz
