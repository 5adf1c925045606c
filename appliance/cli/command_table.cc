// kimictl's subcommands, one line each. Keep the list sorted by path.
#include "cli/commands.h"

namespace kimi::cli {
namespace {

const Command kCommands[] = {
    {"config check", "[--config PATH]", "validate a configuration file (same checks as the daemon)", &RunConfigCheck},
    {"config defaults", "", "print a configuration with every key at its default", &RunConfigDefaults},
    {"version", "", "print kimictl's version and build", &RunVersion},
};

}  // namespace

std::span<const Command> CommandTable() { return kCommands; }

}  // namespace kimi::cli
