// libFuzzer target over the JSON Schema compiler (structured output). Build with clang and
// -DKIMI_FUZZ=ON, then run e.g.
// `build-fuzz/tests/fuzz/schema_fuzz tests/fuzz/schema_corpus -max_total_time=60 -timeout=5`.
#include <cstddef>
#include <cstdint>

#include "schema_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kimi::fuzz::FuzzSchemaOnce(data, size);
  return 0;
}
