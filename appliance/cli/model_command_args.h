// Pieces shared by kimictl's model commands (model_commands.cc: keygen, sign, verify;
// model_lifecycle_commands.cc: import, list, activate, rollback, remove, verify-installed):
// the option parser, the trust-store options, progress lines and error lines.
//
// Thread safety: each call is independent; streams are used from the calling thread only.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kimi/status.h"
#include "models/oms_hasher.h"
#include "models/oms_trust.h"

namespace kimi::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
// The model store is owned by the running daemon: the act must go through its admin API.
inline constexpr int kExitStoreInUse = 3;

// "--name value" options (repeatable), boolean flags, and positional words.
struct ParsedArgs {
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> flags;
  std::vector<std::string> positional;
  std::string error;  // set when an option is unknown or lacks its value

  std::vector<std::string> All(const std::string& name) const;
  std::string One(const std::string& name) const;  // the last value; "" when absent
  bool Has(const std::string& flag) const;
};

ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                     const std::vector<std::string>& boolean);

// The trust store the options name: --trust-dir DIR, --key PUB.pem..., --ca CA.pem...; the
// default directory when none is given.
Result<models::TrustStore> TrustFromArgs(const ParsedArgs& a);

// "1.5 GiB"
std::string HumanBytes(double bytes);
// Prints "<verb>: done / total (pct%), rate/s, ETA n s" lines to err.
models::HashProgressFn ProgressPrinter(std::ostream& err, std::string verb);
// Prints "error: <what>: <message>" and returns kExitFailed.
int Fail(std::ostream& err, const std::string& what, const Status& status);

}  // namespace kimi::cli
