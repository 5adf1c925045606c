// The trust store: the public keys and CA certificates an operator trusts to sign models.
//
// On the appliance it is a directory (/etc/kimi-appliance/trust/ in production) of PEM files;
// each file may hold PUBLIC KEY blocks (trusted signing keys) and CERTIFICATE blocks (trusted
// CA roots for certificate-chain signatures). Other PEM blocks, and files not ending in .pem,
// are skipped with a warning. Keys must be ECDSA P-256, P-384 or P-521.
//
// Thread safety: immutable once loaded; share it freely between threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "models/oms_openssl.h"

namespace kimi::models {

inline constexpr std::string_view kDefaultTrustDir = "/etc/kimi-appliance/trust";

struct TrustedKey {
  SharedPkey key;
  std::string fingerprint;  // hex SHA-256 of the PEM public key (the OMS hint)
  std::string source;       // the file it came from
};

struct TrustedCa {
  SharedX509 cert;
  std::string subject;
  std::string source;
};

class TrustStore {
 public:
  TrustStore() = default;

  // Every *.pem file directly in `dir`. An empty store is not an error here; verification
  // then refuses every model, naming the directory.
  static Result<TrustStore> LoadDirectory(const std::string& dir);
  // A directory (as LoadDirectory) or one PEM file.
  static Result<TrustStore> LoadPath(const std::string& path);

  // Adds every PUBLIC KEY and CERTIFICATE block of `pem_text`; refuses text with neither.
  Status AddPem(std::string_view pem_text, std::string_view source);
  Status AddPemFile(const std::string& path);

  const std::vector<TrustedKey>& keys() const { return keys_; }
  const std::vector<TrustedCa>& cas() const { return cas_; }
  bool empty() const { return keys_.empty() && cas_.empty(); }
  std::string description() const;  // "2 keys, 1 CA from /etc/..." for messages

 private:
  std::vector<TrustedKey> keys_;
  std::vector<TrustedCa> cas_;
  std::string origin_;
};

}  // namespace kimi::models
