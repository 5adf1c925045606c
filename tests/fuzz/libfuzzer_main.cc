// libFuzzer's hook for one target; KIMI_FUZZ_ENTRY names its entry point (fuzz_targets.h),
// set by kimi_add_fuzz_target(). Built only with clang and -DKIMI_FUZZ=ON (`make fuzz`).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kimi::fuzz::PrepareFuzzProcess();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kimi::fuzz::KIMI_FUZZ_ENTRY(data, size);
  return 0;
}
