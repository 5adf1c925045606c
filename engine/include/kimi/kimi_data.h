// Where the Kimi data files shipped with the source live: data/kimi-k3 (Kimi's tiktoken.model,
// the K2.6 tokenizer_config, the vendor verifier's kvv-schema-cases/; data/kimi-k3/README.md
// says where each comes from and under which licence). The one place tests and benchmarks
// resolve that path; products never read it (the demo model gets a copy through
// `kimi-engine synth --tokenizer`).
//
// Thread safety: pure function (reads the environment).
#pragma once

#include <string>

namespace kimi {

// $KIMI_DATA_DIR when set, else <source tree>/data/kimi-k3 as configured by CMake.
std::string KimiDataDir();

}  // namespace kimi
