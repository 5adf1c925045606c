// kimictl's one option parser, for every subcommand: "--name VALUE" and "--name=VALUE" for the
// options that take a value (repeatable; One() is the last), "--flag" for booleans, and the
// positional words. Anything else starting with "--" is an error, so a mistyped option is
// never read as absent (which would fall back to a default such as the live data directory).
//
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kimi::cli {

struct ParsedArgs {
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> flags;
  std::vector<std::string> positional;
  // Set for the first word that is not one of the above: `unknown argument "--x"`,
  // `--x needs a value`, `--flag takes no value`. The parse stops there.
  std::string error;

  std::vector<std::string> All(const std::string& name) const;
  std::string One(const std::string& name) const;  // the last value; "" when absent
  bool Gives(const std::string& name) const;       // the option is given (any value, "" included)
  bool Has(const std::string& flag) const;
};

// `most_words`: the positional words the command takes at most; one past them is an unknown
// argument.
ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                     const std::vector<std::string>& boolean, size_t most_words);

}  // namespace kimi::cli
