#include "cli/commands.h"

namespace kimi::cli {
namespace {

void PrintHelp(const Io& io) {
  std::fprintf(io.out, "usage: kimictl COMMAND [OPTIONS]\n\ncommands:\n");
  for (const Command& c : CommandTable()) {
    std::string line = std::string(c.path) + (c.usage.empty() ? "" : " " + std::string(c.usage));
    std::fprintf(io.out, "  %-36s %.*s\n", line.c_str(), static_cast<int>(c.summary.size()), c.summary.data());
  }
}

// Number of words of `path` when they prefix args[1..], else 0.
size_t MatchWords(std::string_view path, const std::vector<std::string>& argv) {
  size_t words = 0;
  size_t i = 1;
  while (!path.empty()) {
    size_t space = path.find(' ');
    std::string_view word = path.substr(0, space);
    if (i >= argv.size() || argv[i] != word) return 0;
    ++words;
    ++i;
    path = space == std::string_view::npos ? std::string_view() : path.substr(space + 1);
  }
  return words;
}

}  // namespace

int RunKimictl(const std::vector<std::string>& argv, const Io& io) {
  if (argv.size() < 2 || argv[1] == "help" || argv[1] == "--help" || argv[1] == "-h") {
    PrintHelp(io);
    return argv.size() < 2 ? 2 : 0;
  }
  const Command* best = nullptr;
  size_t best_words = 0;
  for (const Command& c : CommandTable()) {
    size_t words = MatchWords(c.path, argv);
    if (words > best_words) {
      best = &c;
      best_words = words;
    }
  }
  if (best == nullptr) {
    std::string given;
    for (size_t i = 1; i < argv.size() && i < 3; ++i) given += (i > 1 ? " " : "") + argv[i];
    std::fprintf(io.err, "kimictl: unknown command \"%s\" (run \"kimictl help\" for the list)\n", given.c_str());
    return 2;
  }
  std::vector<std::string> rest(argv.begin() + 1 + static_cast<std::ptrdiff_t>(best_words), argv.end());
  return best->run(rest, io);
}

bool ParseOptions(std::string_view command, const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                  const Io& io) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool inline_value = false;
    if (size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::fprintf(io.err, "kimictl %.*s: unknown argument \"%s\"\n", static_cast<int>(command.size()), command.data(),
                   args[i].c_str());
      return false;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        std::fprintf(io.err, "kimictl %.*s: %s needs a value\n", static_cast<int>(command.size()), command.data(),
                     name.c_str());
        return false;
      }
      value = args[++i];
    }
    *spec->value = value;
  }
  return true;
}

}  // namespace kimi::cli
