// Self-signed TLS certificates for air-gapped installs (`kimictl tls selfsigned`): a new
// ECDSA P-256 key and an X.509 v3 certificate signed by that key, with subjectAltName
// entries for localhost, 127.0.0.1, ::1 and the names the operator adds, so clients can
// pin it as its own CA (docs/security.md). An operator with a CA-issued certificate
// configures that instead; nothing else in the daemon depends on how the files were made.
// Public header of auth/: other folders include it.
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kimi/status.h"

namespace kimi::auth {

struct SelfSignedSpec {
  std::string cert_path;             // PEM certificate written here (mode 0644)
  std::string key_path;              // PEM private key written here (mode 0600)
  std::string common_name = "kimi-appliance";
  std::vector<std::string> names;    // extra DNS names or IP addresses for subjectAltName
  int64_t valid_days = 825;
  bool overwrite = false;            // AlreadyExists when either file exists and this is false
};

// InvalidArgument for an empty or malformed name or valid_days outside 1..3650.
Status WriteSelfSignedCertificate(const SelfSignedSpec& spec);

// The subjectAltName entries the certificate gets: the defaults, then `names`, without
// repeats; "IP:" for addresses, "DNS:" otherwise.
std::vector<std::string> SubjectAltNames(const std::vector<std::string>& names);

}  // namespace kimi::auth
