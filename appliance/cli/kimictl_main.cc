// kimictl: the operator's command-line tool. Subcommands are listed in command_table.cc.
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return kimi::cli::RunKimictl(args, kimi::cli::Io{});
}
