// Helpers shared by the subcommands that run the model (eval, generate, bench, serve): parsing a
// comma-separated token list, reporting a failure, running a command of its flags.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kimi/model.h"
#include "kimi/status.h"
#include "tools/flags.h"

namespace kimi::tools {

// "1,2,3" -> {1, 2, 3}; InvalidArgument on anything else (empty items, signs, overflow).
Result<std::vector<int32_t>> ParseTokenIds(const std::string& text);

// Prints `status` as "kimi-engine CMD: message" on stderr; returns the exit status it implies
// (kExitUsage for InvalidArgument, else kExitFailure).
int ReportFailure(const char* command, const Status& status);

// A subcommand that is one function of its flags: the command line parsed (ParseCommandLine,
// flags.h), `run` called, its failure reported as ReportFailure does; returns the exit status.
int RunWithFlags(const char* command, const Args& args, const std::vector<FlagSpec>& specs, const char* synopsis,
                 Status (*run)(const Flags& flags));

}  // namespace kimi::tools
