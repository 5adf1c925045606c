// Pieces shared by kimictl's model commands (model_commands.cc: keygen, sign, verify;
// model_lifecycle_commands.cc: import, list, activate, rollback, remove, verify-installed):
// the trust-store options, progress lines and error lines (the option parser: options.h).
//
// Thread safety: each call is independent; streams are used from the calling thread only.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/options.h"
#include "kimi/status.h"
#include "models/oms_hasher.h"
#include "models/oms_trust.h"

namespace kimi::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
// The model store is owned by the running daemon: the act must go through its admin API.
inline constexpr int kExitStoreInUse = 3;

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
