#include "cli/commands.h"

#include "cli/options.h"

namespace kimi::cli {
namespace {

void PrintCommand(const Command& c, std::FILE* to) {
  std::string line = std::string(c.path) + (c.usage.empty() ? "" : " " + std::string(c.usage));
  std::fprintf(to, "  %-36s %.*s\n", line.c_str(), static_cast<int>(c.summary.size()), c.summary.data());
}

void PrintHelp(const Io& io) {
  std::fprintf(io.out, "usage: kimictl COMMAND [OPTIONS]\n\ncommands:\n");
  for (const Command& c : CommandTable()) PrintCommand(c, io.out);
}

// True when c's path starts with the word `group` and goes on ("key list" in "key").
bool InGroup(const Command& c, std::string_view group) {
  return c.path.size() > group.size() && c.path.starts_with(group) && c.path[group.size()] == ' ';
}

// True when `word` is the first word of a command of several words ("key" of "key list").
bool IsGroup(std::string_view word) {
  for (const Command& c : CommandTable()) {
    if (InGroup(c, word)) return true;
  }
  return false;
}

// "usage: kimictl key SUBCOMMAND ..." and the group's commands, for a group given without (or
// with an unknown) subcommand.
void PrintGroupUsage(std::string_view group, std::FILE* to) {
  std::fprintf(to, "usage: kimictl %.*s SUBCOMMAND [OPTIONS]\n\nsubcommands:\n", static_cast<int>(group.size()),
               group.data());
  for (const Command& c : CommandTable()) {
    if (InGroup(c, group)) PrintCommand(c, to);
  }
}

// The options a usage line requires: the "--name" words outside any [...] ("--format" of
// "--format jsonl|csv|bundle [--since T]"). The table's usage is the one statement of what a
// command needs, so the dispatcher enforces it for every command alike.
std::vector<std::string_view> RequiredOptions(std::string_view usage) {
  std::vector<std::string_view> required;
  int depth = 0;
  size_t i = 0;
  while (i < usage.size()) {
    if (usage[i] == '[') ++depth;
    if (usage[i] == ']') --depth;
    if (depth == 0 && usage.substr(i).starts_with("--") && (i == 0 || usage[i - 1] == ' ')) {
      size_t end = usage.find_first_of(" [", i);
      required.push_back(usage.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
      i = end == std::string_view::npos ? usage.size() : end;
      continue;
    }
    ++i;
  }
  return required;
}

// True when args give `option` ("--format x" or "--format=x").
bool Gives(const std::vector<std::string>& args, std::string_view option) {
  for (const std::string& a : args) {
    if (a == option || (a.starts_with(option) && a.size() > option.size() && a[option.size()] == '=')) return true;
  }
  return false;
}

// Prints the usage error and returns false when a directory or file option is given empty
// ("--data-dir ''", "--data-dir=", an unset shell variable): each command would read it as
// absent and act on the default data directory, the live appliance's.
bool HasNoEmptyPathOption(const Command& c, const std::vector<std::string>& args, const Io& io) {
  for (size_t i = 0; i < args.size(); ++i) {
    for (std::string_view option : {"--data-dir", "--config", "--trust-dir"}) {
      const bool empty = (args[i] == option && i + 1 < args.size() && args[i + 1].empty()) ||
                         args[i] == std::string(option) + "=";
      if (!empty) continue;
      std::fprintf(io.err, "kimictl %.*s: %.*s is given an empty value\n", static_cast<int>(c.path.size()), c.path.data(),
                   static_cast<int>(option.size()), option.data());
      return false;
    }
  }
  return true;
}

// Prints the usage error and returns false when args lack an option c.usage requires.
bool HasRequiredOptions(const Command& c, const std::vector<std::string>& args, const Io& io) {
  if (Gives(args, "--help") || Gives(args, "-h")) return true;  // the command answers with its usage
  for (std::string_view option : RequiredOptions(c.usage)) {
    if (Gives(args, option)) continue;
    std::fprintf(io.err, "kimictl %.*s: %.*s is required\nusage: kimictl %.*s %.*s\n", static_cast<int>(c.path.size()),
                 c.path.data(), static_cast<int>(option.size()), option.data(), static_cast<int>(c.path.size()),
                 c.path.data(), static_cast<int>(c.usage.size()), c.usage.data());
    return false;
  }
  return true;
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

// No command matches argv. A group ("kimictl key") without its subcommand gets the group's
// usage on err, exit 2 (on out, exit 0, when asked with help, --help or -h); an unknown
// subcommand of a group the same after the error line.
int UnknownCommand(const std::vector<std::string>& argv, const Io& io) {
  const std::string& group = argv[1];
  const std::string next = argv.size() > 2 ? argv[2] : "";
  if (IsGroup(group) && (next == "help" || next == "--help" || next == "-h")) {
    PrintGroupUsage(group, io.out);
    return 0;
  }
  if (IsGroup(group) && (next.empty() || next.starts_with("-"))) {
    PrintGroupUsage(group, io.err);
    return 2;
  }
  std::string given;
  for (size_t i = 1; i < argv.size() && i < 3; ++i) given += (i > 1 ? " " : "") + argv[i];
  std::fprintf(io.err, "kimictl: unknown command \"%s\" (run \"kimictl help\" for the list)\n", given.c_str());
  if (IsGroup(group)) PrintGroupUsage(group, io.err);
  return 2;
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
  if (best == nullptr) return UnknownCommand(argv, io);
  std::vector<std::string> rest(argv.begin() + 1 + static_cast<std::ptrdiff_t>(best_words), argv.end());
  if (!HasRequiredOptions(*best, rest, io) || !HasNoEmptyPathOption(*best, rest, io)) return 2;
  return best->run(rest, io);
}

bool ParseOptions(std::string_view command, const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                  const Io& io, std::string* positional) {
  std::vector<std::string> with_value, flags;
  for (const OptionSpec& spec : specs) (spec.flag != nullptr ? flags : with_value).emplace_back(spec.name);
  const ParsedArgs parsed = ParseArgs(args, with_value, flags, positional != nullptr ? 1 : 0);
  if (!parsed.error.empty()) {
    std::fprintf(io.err, "kimictl %.*s: %s\n", static_cast<int>(command.size()), command.data(), parsed.error.c_str());
    return false;
  }
  for (const OptionSpec& spec : specs) {
    const std::string name(spec.name);
    if (spec.flag != nullptr) *spec.flag = parsed.Has(name);
    else if (parsed.Gives(name)) *spec.value = parsed.One(name);
  }
  if (positional != nullptr && !parsed.positional.empty()) *positional = parsed.positional.front();
  return true;
}

}  // namespace kimi::cli
