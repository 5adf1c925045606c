#include "cli/options.h"

#include <algorithm>

namespace kimi::cli {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::vector<std::string> ParsedArgs::All(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : options) {
    if (k == name) out.push_back(v);
  }
  return out;
}

std::string ParsedArgs::One(const std::string& name) const {
  auto all = All(name);
  return all.empty() ? "" : all.back();
}

bool ParsedArgs::Gives(const std::string& name) const {
  return std::any_of(options.begin(), options.end(), [&](const auto& option) { return option.first == name; });
}

bool ParsedArgs::Has(const std::string& flag) const { return Contains(flags, flag); }

namespace {

// Whether `word` names one of the command's options ("--format" or "--format=x").
bool IsOption(const std::string& word, const std::vector<std::string>& with_value, const std::vector<std::string>& boolean) {
  if (!word.starts_with("--")) return false;
  const std::string name = word.substr(0, word.find('='));
  return Contains(with_value, name) || Contains(boolean, name);
}

}  // namespace

ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                     const std::vector<std::string>& boolean, size_t most_words) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (!word.starts_with("--")) {
      if (parsed.positional.size() == most_words) {
        parsed.error = "unknown argument \"" + word + "\"";
        return parsed;
      }
      parsed.positional.push_back(word);
      continue;
    }
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    if (Contains(boolean, name)) {
      if (eq != std::string::npos) {
        parsed.error = name + " takes no value";
        return parsed;
      }
      parsed.flags.push_back(name);
    } else if (Contains(with_value, name)) {
      if (eq != std::string::npos) {
        parsed.options.emplace_back(name, word.substr(eq + 1));
      } else if (i + 1 < args.size() && !IsOption(args[i + 1], with_value, boolean)) {
        parsed.options.emplace_back(name, args[++i]);
      } else {
        // "--since --format jsonl" is a forgotten value, not a value "--format".
        parsed.error = name + " needs a value" +
                       (i + 1 < args.size() ? " (it is followed by the option " + args[i + 1].substr(0, args[i + 1].find('=')) +
                                                  "; write " + name + "=VALUE for a value that starts with --)"
                                            : "");
        return parsed;
      }
    } else {
      parsed.error = "unknown argument \"" + word + "\"";
      return parsed;
    }
  }
  return parsed;
}

}  // namespace kimi::cli
