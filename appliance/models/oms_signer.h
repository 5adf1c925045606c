// Signing a model directory (or file) into an OMS bundle, in the format of the reference
// signer (model_signing 1.1): a Sigstore bundle v0.3 with a public-key hint (or the signing
// certificate chain), an empty
// tlogEntries list and a DSSE envelope over an in-toto Statement v1 with predicate
// https://model_signing/signature/v1.0. The bundle is written compactly; the payload is
// indented by two spaces, as the reference's protobuf JSON writer does.
// Public header of models/: other folders include it.
// Thread safety: SignModel() is reentrant; it writes only the signature file.
#pragma once

#include <string>
#include <vector>

#include "kimi/status.h"
#include "models/oms_hasher.h"
#include "models/oms_openssl.h"

namespace kimi::models {

// The reference signer's default ignore list; a signature written elsewhere inside the model
// directory is added to it.
inline const std::vector<std::string> kDefaultSignIgnorePaths = {".git", ".gitattributes", ".github", ".gitignore",
                                                                 "model.sig"};

struct SignRequest {
  std::string model_path;
  std::string signature_path;  // empty: DefaultSignaturePath(model_path)
  SharedPkey private_key;      // ECDSA P-256/P-384/P-521
  // Empty: the bundle names the key by its hint. Otherwise the leaf certificate of
  // private_key, then its intermediates: the bundle carries them as x509CertificateChain, as
  // the reference signer's certificate method does.
  std::vector<SharedX509> certificate_chain;
  std::vector<std::string> ignore_paths = kDefaultSignIgnorePaths;
  uint64_t shard_size = 0;     // 0: one resource per file ("files"); else "shards"
  bool auto_shard_size = false;  // true: "shards" of AutoShardSize(the model's bytes); shard_size unused
  HashOptions hashing;
};

struct SignResult {
  std::string signature_path;
  std::string subject_digest_hex;
  size_t resources = 0;
  uint64_t bytes = 0;
};

// The shard size `kimictl model sign` uses by default: the smallest power of two that cuts the
// model into at most 1024 shards, clamped to [4 MiB, 1 GiB]. A SHA-256 stream cannot be split,
// so with whole files verification is as slow as the largest file (k3-mini: five files on two
// cores leave one core a third idle); a thousand shards keep every core busy to the end, while a
// 1.4 TiB checkpoint still lists only ~1,500 resources and no shard costs more to open than to hash.
uint64_t AutoShardSize(uint64_t total_bytes);

// Builds the bundle text without writing it. InvalidArgument when the chain's leaf does not
// hold private_key's public half.
Result<std::string> BuildBundle(const SignRequest& request, SignResult* result);

// BuildBundle() and writes it to the signature path (replacing an old signature atomically).
Result<SignResult> SignModel(const SignRequest& request);

}  // namespace kimi::models
