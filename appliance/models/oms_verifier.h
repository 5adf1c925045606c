// Model verification: proves that the bytes of a model on disk are the bytes a trusted signer
// signed, and returns them as a VerifiedManifest: the only thing the model loader accepts.
//
// ModelVerifier::Verify() goes in this order, failing on the first refusal:
//   1. parse model.sig strictly (oms_bundle.h);
//   2. check the DSSE signature against the trust store (oms_signature.h);
//   3. parse the signed in-toto statement (oms_statement.h);
//   4. list the model's files, honouring the signed ignore_paths and symlink policy
//      (oms_model_tree.h), and compare the list with the manifest: a missing file and a file
//      the manifest does not name are refused before any hashing;
//   5. hash every file or shard in parallel (oms_hasher.h), unless the caller already knows
//      its digest (VerifyRequest::known_digests), and compare each digest.
// Every refusal is a Status whose message names the file or the field.
// Public header of models/: other folders include it.
// Thread safety: Verify() is reentrant; a VerifiedManifest is an immutable value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kimi/regular_file.h"
#include "kimi/status.h"
#include "models/oms_hasher.h"
#include "models/oms_signature.h"
#include "models/oms_statement.h"
#include "models/oms_trust.h"

namespace kimi::models {

class ModelVerifier;

// What was proven: the model's resources and digests, the subject digest that names the
// model, and who signed it. Only ModelVerifier can make one.
class VerifiedManifest {
 public:
  struct Entry {
    std::string name;  // resource name as signed ("path" or "path:start:end")
    std::string path;  // file relative to the model root ("." for a single-file model)
    uint64_t start = 0;
    uint64_t end = 0;  // byte range; for whole files [0, size)
    std::string sha256_hex;
  };

  const std::string& model_path() const { return model_path_; }
  const std::string& model_name() const { return model_name_; }  // informative only
  const std::string& subject_digest_hex() const { return subject_digest_hex_; }
  const SignerIdentity& signer() const { return signer_; }
  SerializationMethod method() const { return method_; }
  uint64_t shard_size() const { return shard_size_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<std::string> files() const;  // distinct paths, canonical order
  // The signed size of `path`: where its last signed range ends (0 for a path not signed).
  uint64_t file_size(const std::string& path) const;
  // The file (device, inode, size) whose bytes were found to be `path`'s signed bytes; null for
  // a path not signed. A name can be renamed over after verification: whoever opens `path`
  // later must find this file there, or it reads bytes nobody verified.
  const FileIdentity* verified_file(const std::string& path) const;
  uint64_t total_bytes() const { return total_bytes_; }
  bool legacy_format() const { return legacy_; }

 private:
  friend class ModelVerifier;
  VerifiedManifest() = default;

  std::string model_path_;
  std::string model_name_;
  std::string subject_digest_hex_;
  SignerIdentity signer_;
  SerializationMethod method_ = SerializationMethod::kFiles;
  uint64_t shard_size_ = 0;
  std::vector<Entry> entries_;
  std::map<std::string, FileIdentity> identities_;  // by path
  uint64_t total_bytes_ = 0;
  bool legacy_ = false;
};

struct VerifyRequest {
  std::string model_path;       // a directory, or a single model file
  std::string signature_path;   // empty: <model dir>/model.sig (or model.sig beside a single file)
  std::vector<std::string> extra_ignore_paths;  // besides the signed ignore_paths and the signature
  HashOptions hashing;
  // Digests of ranges of these very files that the caller computed while it wrote them (the
  // store's import hashes as it copies; the bytes are the caller's own, on its own disk).
  // Ranges found here are not read again; every other step is unchanged. May be null.
  const KnownDigests* known_digests = nullptr;
};

class ModelVerifier {
 public:
  static Result<VerifiedManifest> Verify(const VerifyRequest& request, const TrustStore& trust);
};

// The default signature location for a model path.
std::string DefaultSignaturePath(const std::string& model_path);

}  // namespace kimi::models
