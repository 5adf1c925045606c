// Helpers shared by the io tests: scratch directories and hand-built safetensors images.
// Thread safety: each test uses its own directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kimi::testing_util {

// A fresh empty directory under the system temp dir, unique per call.
std::string MakeTempDir(const std::string& tag);

// An image: 8-byte little-endian length of `header`, `header`, then `data`.
std::vector<uint8_t> SafetensorsImage(const std::string& header, const std::vector<uint8_t>& data);

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);
void WriteText(const std::string& path, const std::string& text);
std::string ReadText(const std::string& path);

}  // namespace kimi::testing_util
