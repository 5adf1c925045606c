// libFuzzer target over the model-file parsers. Build with clang and -DKIMI_FUZZ=ON, then run
// e.g. `build-fuzz/tests/fuzz/safetensors_fuzz tests/fuzz/corpus -max_total_time=60`.
#include <cstddef>
#include <cstdint>

#include "safetensors_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kimi::fuzz::FuzzModelFilesOnce(data, size);
  return 0;
}
