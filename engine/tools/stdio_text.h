// Standard-input, id-list and error-exit helpers shared by the text subcommands (tokenize, detokenize,
// render): read all of stdin as bytes, parse and format comma-separated token ids.
//
// Thread safety: the functions share no state; ReadAllStdin consumes the process's stdin.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::tools {

// Every byte of stdin, unchanged (no newline is added or removed).
// Errors: IOError when reading fails.
Result<std::string> ReadAllStdin();

// Ids separated by commas and/or whitespace ("1,2, 3\n" -> {1, 2, 3}); an empty or
// whitespace-only text gives no ids. Errors: InvalidArgument naming the first bad entry
// (not a decimal integer, out of int32 range, or an empty entry between two commas).
Result<std::vector<int32_t>> ParseIdList(std::string_view text);

// "1,2,3" (no spaces, no trailing newline).
std::string FormatIdList(std::span<const int32_t> ids);

// Print "kimi-engine <command>: <status>" on stderr and return the exit status: kExitUsage
// for a bad command line, kExitFailure for bad input (text, ids, JSON, files).
int FailUsage(const char* command, const Status& status);
int FailInput(const char* command, const Status& status);

}  // namespace kimi::tools
