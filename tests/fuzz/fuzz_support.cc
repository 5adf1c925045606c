#include "fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "kimi/log.h"

namespace kimi::fuzz {

std::string SourcePath(const std::string& relative) {
  const char* env = std::getenv("KIMI_SOURCE_DIR");
  return std::string(env != nullptr ? env : KIMI_FUZZ_SOURCE_DIR) + "/" + relative;
}

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(SourcePath(relative), std::ios::binary);
  if (!in) SetupFailed("cannot read " + SourcePath(relative));
  return {std::istreambuf_iterator<char>(in), {}};
}

void PrepareFuzzProcess() {
  log::Configure(log::Level::kError, log::Format::kJson);
  setenv("KIMI_SOURCE_DIR", KIMI_FUZZ_SOURCE_DIR, /*overwrite=*/0);
}

void SetupFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz target set-up failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace kimi::fuzz
