// LAYERS (the file at the root of the source tree) read into its two layer orders and its
// pending exceptions. Shared by the include-graph test, which checks #includes against it, and
// the docs test, which checks docs/architecture.md's copy of it.
//
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <istream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kimi_layers {

struct Layers {
  std::vector<std::string> engine;     // lowest first
  std::vector<std::string> appliance;  // lowest first
  // (file relative to the root, included folder) -> the reason it is still allowed.
  std::map<std::pair<std::string, std::string>, std::string> pending;
};

inline std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Reads LAYERS; a malformed line is reported in `errors`.
inline Layers ParseLayers(std::istream& in, std::vector<std::string>* errors) {
  Layers layers;
  std::string section;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = Trim(line);
    if (text.empty() || text[0] == '#') continue;
    if (text.front() == '[' && text.back() == ']') {
      section = text.substr(1, text.size() - 2);
      continue;
    }
    // A line that starts with blanks continues the comment of the folder above it.
    if (line[0] == ' ' || line[0] == '\t') continue;
    std::istringstream words(text);
    std::string first;
    words >> first;
    if (section == "engine" || section == "appliance") {
      std::vector<std::string>& order = section == "engine" ? layers.engine : layers.appliance;
      if (std::find(layers.engine.begin(), layers.engine.end(), first) != layers.engine.end() ||
          std::find(layers.appliance.begin(), layers.appliance.end(), first) != layers.appliance.end()) {
        errors->push_back("LAYERS:" + std::to_string(number) + ": " + first + " is listed twice");
      }
      order.push_back(first);
    } else if (section == "pending") {
      std::string arrow, folder;
      words >> arrow >> folder;
      std::string reason;
      std::getline(words, reason);
      if (arrow != "->" || folder.empty() || Trim(reason).empty()) {
        errors->push_back("LAYERS:" + std::to_string(number) + ": a pending line is `file -> folder  reason`");
        continue;
      }
      layers.pending[{first, folder}] = Trim(reason);
    } else {
      errors->push_back("LAYERS:" + std::to_string(number) + ": outside [engine], [appliance] or [pending]");
    }
  }
  return layers;
}

}  // namespace kimi_layers
