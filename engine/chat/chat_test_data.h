// Test-only helpers: the committed golden data of tests/data/chat (rendered once from the
// reference template by tests/data/chat/generate_golden.py).
//
// Thread safety: functions read files; call them from one thread.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kimi::chat::testing {

inline std::filesystem::path TestDataDir() { return KIMI_CHAT_TESTDATA_DIR; }

// The .json files of a subfolder (golden/ or outputs/), sorted by name.
inline std::vector<std::filesystem::path> TestDataFiles(const char* subdir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(TestDataDir() / subdir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline nlohmann::ordered_json ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::ordered_json::parse(text.str());
}

}  // namespace kimi::chat::testing
