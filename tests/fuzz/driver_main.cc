// The standalone driver's main for one target; KIMI_FUZZ_ENTRY names its entry point
// (fuzz_targets.h), set by kimi_add_fuzz_target().
#include "fuzz_driver.h"
#include "fuzz_support.h"
#include "fuzz_targets.h"

int main(int argc, char** argv) {
  kimi::fuzz::PrepareFuzzProcess();
  return kimi::fuzz::RunFuzzDriver(argc, argv, &kimi::fuzz::KIMI_FUZZ_ENTRY);
}
