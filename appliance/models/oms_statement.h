// The signed payload of an OMS bundle: an in-toto Statement v1 whose predicate lists every
// resource (file or file shard) of the model with its SHA-256, and how the model was
// serialized (files or shards, shard size, ignored paths, symlink policy).
//
// ParseStatement() turns the payload bytes (already authenticated by the signature check)
// into a SignedStatement, refusing anything ambiguous: an unknown predicate type, more than
// one subject, an unknown serialization method or hash, a resource name that is not a plain
// relative path inside the model directory, duplicate or unsorted resources, a subject digest
// that is not the SHA-256 of the concatenated resource digests. The legacy predicate of
// model_signing 0.2 (https://model_signing/Digests/v0.1: one subject per file) is read into
// the same shape.
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::models {

inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kPredicateType = "https://model_signing/signature/v1.0";
inline constexpr std::string_view kLegacyPredicateType = "https://model_signing/Digests/v0.1";

enum class SerializationMethod { kFiles, kShards };

// One entry of predicate.resources. For kFiles the name is the path; for kShards it is
// "path:start:end" with [start, end) the byte range of the shard.
struct ManifestResource {
  std::string name;
  std::string path;  // relative, '/'-separated; "." when the model is a single file
  uint64_t start = 0;
  uint64_t end = 0;  // kShards only
  std::string digest;  // raw 32-byte SHA-256
};

struct SignedStatement {
  bool legacy = false;  // model_signing 0.2 predicate
  std::string model_name;
  std::string subject_digest;  // raw 32 bytes; for legacy statements computed from resources
  SerializationMethod method = SerializationMethod::kFiles;
  std::string hash_type = "sha256";
  uint64_t shard_size = 0;  // kShards only
  bool allow_symlinks = false;
  std::vector<std::string> ignore_paths;
  std::vector<ManifestResource> resources;  // in canonical order
};

Result<SignedStatement> ParseStatement(std::string_view payload);

// The canonical order of resources: by path, compared one '/'-separated component at a time,
// then by shard start and end (numerically). This is the order the reference signer emits.
bool ResourceLess(const ManifestResource& a, const ManifestResource& b);

// SHA-256 over the concatenated raw digests, in the order given.
std::string SubjectDigest(const std::vector<ManifestResource>& resources);

// OK when `path` is "." or a '/'-separated relative path whose components are non-empty and
// neither "." nor ".."; the error names the path and why it is refused.
Status CheckModelRelativePath(std::string_view path);

// "path:start:end" for shards; the path alone for files.
std::string ShardName(std::string_view path, uint64_t start, uint64_t end);

}  // namespace kimi::models
