// The subcommands of the kimi-engine command line. Each subcommand is one named function in its
// own file; main.cc lists them in one table, so adding `eval` or `serve` is one declaration here
// and one table entry there.
//
// A subcommand receives the arguments after its name, prints its result on stdout and its
// errors on stderr, and returns the process exit status (0 success, 1 failure, 2 usage error).
// Thread safety: called once, from main.
#pragma once

#include <string>
#include <vector>

namespace kimi::tools {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;  // one line for `kimi-engine --help`
  int (*run)(const Args& args);
};

// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int RunSynth(const Args& args);
int RunInfo(const Args& args);
int RunEval(const Args& args);
int RunGenerate(const Args& args);
int RunBench(const Args& args);
int RunTokenize(const Args& args);
int RunDetokenize(const Args& args);
int RunRender(const Args& args);
int RunServe(const Args& args);
int RunQuantize(const Args& args);

}  // namespace kimi::tools
