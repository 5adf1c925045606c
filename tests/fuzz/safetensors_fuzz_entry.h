// The one entry point shared by the libFuzzer target and the corpus-replay test: feeds a byte
// string to every parser of untrusted model files (safetensors image, config.json, index JSON)
// and touches every byte a successful parse hands out, so a sanitizer sees any bad read.
//
// Thread safety: reentrant.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kimi::fuzz {

// Returns true when the bytes parsed as a valid safetensors image.
bool FuzzModelFilesOnce(const uint8_t* data, size_t size);

}  // namespace kimi::fuzz
