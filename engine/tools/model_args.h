// Helpers shared by the subcommands that run the model (eval, generate, bench): parsing a
// comma-separated token list and loading a model with a thread count from the flags.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kimi/model.h"
#include "kimi/status.h"

namespace kimi::tools {

// "1,2,3" -> {1, 2, 3}; InvalidArgument on anything else (empty items, signs, overflow).
Result<std::vector<int32_t>> ParseTokenIds(const std::string& text);

// Prints `status` as "kimi-engine CMD: message" on stderr; returns the exit status it implies.
int ReportFailure(const char* command, const Status& status);

}  // namespace kimi::tools
