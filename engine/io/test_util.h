// Helpers shared by the engine's tests: scratch directories, hand-built safetensors images, and
// synthetic model directories.
// Thread safety: each test uses its own directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kimi/status.h"

namespace kimi::testing_util {

// A fresh empty directory under the system temp dir, unique per call.
std::string MakeTempDir(const std::string& tag);

// An image: 8-byte little-endian length of `header`, `header`, then `data`.
std::vector<uint8_t> SafetensorsImage(const std::string& header, const std::vector<uint8_t>& data);

// A synthetic model of the preset `preset` (io/k3_presets.h) written with `seed` into a fresh
// directory (MakeTempDir(tag)), in shards of at most 1 MiB: its path, or why it was not written.
Result<std::string> WriteTestModel(const std::string& tag, const std::string& preset, uint64_t seed);

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);
void WriteText(const std::string& path, const std::string& text);
std::string ReadText(const std::string& path);

}  // namespace kimi::testing_util
