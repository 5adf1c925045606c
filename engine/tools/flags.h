// Parses the `--name value` / `--name=value` / `--switch` arguments of one subcommand against a
// declared list, rejecting unknown flags and missing values with a readable message.
//
// Thread safety: a Flags object is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kimi/status.h"
#include "tools/command.h"

namespace kimi::tools {

struct FlagSpec {
  std::string name;  // without the leading "--"
  bool takes_value;
  std::string help;  // "DIR  where to write the model"
};

class Flags {
 public:
  // Fails with InvalidArgument naming the offending argument.
  static Result<Flags> Parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs);

  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> Get(const std::string& name) const;
  // The value of a required flag, or InvalidArgument "--name is required".
  Result<std::string> Require(const std::string& name) const;
  // An unsigned integer flag; `fallback` when absent.
  Result<uint64_t> GetUint(const std::string& name, uint64_t fallback) const;

  // "  --out DIR    where to write the model" lines for the usage text.
  static std::string Usage(const std::vector<FlagSpec>& specs);

 private:
  std::map<std::string, std::string> values_;
};

// Every error a subcommand reports: "kimi-engine COMMAND: Code: message" on stderr (the
// status's code first, as Status::ToString writes it); returns exit_status.
int ReportError(const char* command, const Status& status, int exit_status);

// A subcommand's command line parsed against its flags: `flags`, or nothing and the exit status
// to return at once, after --help (the synopsis and the flags printed on stdout, kExitOk) or
// a malformed command line (on stderr as "kimi-engine COMMAND: InvalidArgument: ...",
// kExitUsage). `synopsis` is the usage text after "kimi-engine ", lines after the first allowed.
struct CommandLine {
  std::optional<Flags> flags;
  int exit_status = kExitOk;
};
CommandLine ParseCommandLine(const char* command, const Args& args, const std::vector<FlagSpec>& specs,
                             const char* synopsis);

}  // namespace kimi::tools
