// kimictl: the operator's command-line tool, as a table of subcommands.
//
// A subcommand is a path of words ("config check") and a function that receives the
// remaining arguments and an output pair, and returns the process exit code (0 success,
// 1 failure, 2 usage error). The table lives in command_table.cc: adding a subcommand is
// one line there plus its function in a file of its own. Errors print as one readable line
// on stderr ("kimictl config check: ..."), never as a stack trace.
//
// Thread safety: single-threaded, like the program.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kimi::cli {

struct Io {
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

using CommandFn = int (*)(const std::vector<std::string>& args, const Io& io);

struct Command {
  std::string_view path;     // "config check"
  std::string_view usage;    // "--config PATH"
  std::string_view summary;  // one line for the help listing
  CommandFn run;
};

// The table (command_table.cc).
std::span<const Command> CommandTable();

// Finds the longest command path that prefixes argv[1..] and runs it; prints help for
// "help", "--help" or no arguments; exit 2 with a hint for an unknown command, and with the
// group's subcommands on err for a group given without one ("kimictl key"). Before running a
// command, enforces its usage: an option written outside [...] ("--format" of "audit export")
// is required, and its absence is a usage error (exit 2) naming it.
int RunKimictl(const std::vector<std::string>& argv, const Io& io);

// Parses "--name VALUE" / "--name=VALUE" options of a subcommand (options.h), and with
// `positional` one word anywhere among them (the key, user or role the command acts on).
// Returns false and prints "kimictl <command>: ..." to io.err on an unknown or incomplete
// option or a word past those taken.
struct OptionSpec {
  std::string_view name;  // "--config"
  std::string* value;     // set when given; nullptr for a flag
  bool* flag = nullptr;   // a flag ("--force"): set to true when given
};
bool ParseOptions(std::string_view command, const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                  const Io& io, std::string* positional = nullptr);

// The commands themselves.
int RunVersion(const std::vector<std::string>& args, const Io& io);
int RunConfigCheck(const std::vector<std::string>& args, const Io& io);
int RunConfigDefaults(const std::vector<std::string>& args, const Io& io);

}  // namespace kimi::cli
