// kimictl's model-signing commands, as functions its command table calls:
//   kimictl keygen [--out PREFIX] [--force]
//       writes PREFIX.pem (ECDSA P-256 private key, mode 0600) and PREFIX.pub.pem
//   kimictl model sign --key KEY.pem [--signature PATH] [--shard-size BYTES] [--ignore PATH]... MODEL
//       writes MODEL/model.sig (an OpenSSF Model Signing bundle)
//   kimictl model verify [--key PUB.pem]... [--ca CA.pem]... [--trust-dir DIR]
//                        [--signature PATH] [--ignore PATH]... [--threads N] [--quiet] MODEL
//       verifies the model against the given keys/CAs (default trust dir
//       /etc/kimi-appliance/trust), printing progress and the result
// `args` are the words after the command name. Return value: the process exit status
// (0 success, 1 refused or failed, 2 usage error). Output goes to `out`, messages and
// progress to `err`.
//
// Thread safety: each call is independent; the streams are used from the calling thread only.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace kimi::cli {

int RunKeygen(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelSign(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunModelVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The same, on std::cout and std::cerr.
int RunKeygen(const std::vector<std::string>& args);
int RunModelSign(const std::vector<std::string>& args);
int RunModelVerify(const std::vector<std::string>& args);

}  // namespace kimi::cli
