// The trust store: the public keys and CA certificates an operator trusts to sign models.
//
// On the appliance it is a directory (/etc/kimi-appliance/trust/ in production) of PEM files;
// each file may hold PUBLIC KEY blocks (trusted signing keys) and CERTIFICATE blocks (trusted
// CA roots for certificate-chain signatures). Other PEM blocks, and files not ending in .pem,
// are skipped with a warning. Keys must be ECDSA P-256, P-384 or P-521.
//
// "Signer: <pattern>" lines in the text above a CERTIFICATE block (outside the block, where
// PEM allows explanatory text and OpenSSL's tools ignore it) pin the identities that CA may
// vouch for (oms_identity.h); without them any code-signing leaf it issued may sign. A file
// whose signer lines cannot be honoured (a bad pattern, lines above a PUBLIC KEY or after the
// last block) is refused whole, so a CA is never trusted wider than its file says.
// Public header of models/: other folders include it.
// Thread safety: immutable once loaded; share it freely between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "models/oms_identity.h"
#include "models/oms_openssl.h"

namespace kimi::models {

inline constexpr std::string_view kDefaultTrustDir = "/etc/kimi-appliance/trust";

// The most a trust file may hold; a few keys or certificates take a few KiB.
inline constexpr uint64_t kMaxTrustFileBytes = 1u << 20;

struct TrustedKey {
  SharedPkey key;
  std::string fingerprint;  // hex SHA-256 of the PEM public key (the OMS hint)
  std::string source;       // the file it came from
};

struct TrustedCa {
  SharedX509 cert;
  std::string subject;
  std::string source;
  std::vector<SignerPattern> signers;  // empty: any code-signing leaf under this CA
};

// One PEM block of a text: [preamble, begin) is the text above it (from the end of the block
// before, or the start), [begin, end) the block through its END line and line break.
struct PemBlock {
  std::string name;  // "PUBLIC KEY", "CERTIFICATE", ...
  size_t preamble = 0;
  size_t begin = 0;
  size_t end = 0;
};
// The blocks of `text`, in order, from their BEGIN and END lines; an unterminated block ends
// the list.
std::vector<PemBlock> SplitPemBlocks(std::string_view text);

// The patterns of the "Signer:" lines of a block's preamble (the key is matched without
// regard to case; other lines are comments). InvalidArgument for a line that starts with
// "signer" and is not a valid "Signer: <pattern>".
Result<std::vector<SignerPattern>> ParseSignerLines(std::string_view preamble);
// Whether ParseSignerLines reads `line` (it starts with "signer", in any case, after blanks).
bool IsSignerLine(std::string_view line);
// "Signer: <pattern>\n" for each, the text ParseSignerLines reads.
std::string SignerLines(const std::vector<SignerPattern>& signers);

class TrustStore {
 public:
  TrustStore() = default;

  // Every *.pem file directly in `dir`. An empty store is not an error here; verification
  // then refuses every model, naming the directory.
  static Result<TrustStore> LoadDirectory(const std::string& dir);
  // A directory (as LoadDirectory) or one PEM file.
  static Result<TrustStore> LoadPath(const std::string& path);

  // Adds every PUBLIC KEY and CERTIFICATE block of `pem_text`, with the signer patterns
  // above each CERTIFICATE; refuses text with neither, and adds nothing from text whose
  // signer lines are invalid or stand above anything but a CERTIFICATE.
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
