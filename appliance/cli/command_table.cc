// kimictl's subcommands, one line each. Keep the list sorted by path.
#include "cli/commands.h"
#include "cli/model_commands.h"
#include "cli/stdio_adapter.h"

namespace kimi::cli {
namespace {

const Command kCommands[] = {
    {"config check", "[--config PATH]", "validate a configuration file (same checks as the daemon)", &RunConfigCheck},
    {"config defaults", "", "print a configuration with every key at its default", &RunConfigDefaults},
    {"keygen", "[--out PREFIX] [--force]", "make an ECDSA P-256 key pair for signing models", &OnStdio<RunKeygen>},
    {"model sign", "--key KEY.pem [--ignore PATH]... MODEL_DIR", "write MODEL_DIR/model.sig (OpenSSF Model Signing)",
     &OnStdio<RunModelSign>},
    {"model verify", "[--key PUB.pem]... [--ca CA.pem]... [--trust-dir DIR] MODEL_DIR",
     "verify a model's signature and every file's digest", &OnStdio<RunModelVerify>},
    {"version", "", "print kimictl's version and build", &RunVersion},
};

}  // namespace

std::span<const Command> CommandTable() { return kCommands; }

}  // namespace kimi::cli
