// Checking that the bytes the engine serves are still the bytes a trusted signer signed.
//
// The engine reads its weight files in place through read-only MAP_PRIVATE mappings. A
// private read-only mapping is not a copy: its pages are the file's page-cache pages, so a
// write(2) to the file after verification changes what the engine computes with at once.
// CheckServedBytes() therefore hashes the served bytes themselves, every range of the signed
// manifest: a range of a file the engine maps is hashed from the engine's mapping (what it
// computes with, even when the path now names another file), every other file (config,
// tokenizer, signed extras) from the file, opened without following a link or waiting
// (kimi/regular_file.h), and each digest is compared with the manifest's.
// docs/model-lifecycle.md ("Served bytes") describes how the daemon uses it.
//
// A pass may be paced (bytes per second) so that re-hashing never competes with serving for
// the memory bandwidth, and stops at the next chunk when `cancel` becomes true.
//
// Thread safety: CheckServedBytes() is reentrant; the target must stay alive (its `owner`)
// for the whole call.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kimi/safetensors.h"
#include "kimi/status.h"
#include "models/oms_verifier.h"

namespace kimi::models {

// One served model version: what its engine maps and what it was verified against.
struct IntegrityTarget {
  std::string digest;     // the OMS subject digest (hex) that names the version
  std::string directory;  // the verified model directory the engine loaded
  std::shared_ptr<const VerifiedManifest> manifest;
  std::vector<MappedWeightFile> mapped;  // the engine's mappings, by path relative to directory
  std::shared_ptr<const void> owner;     // keeps `mapped` valid (the engine, or a lease on it)
};

// The first range whose served bytes do not hash to the signed digest.
struct IntegrityFailure {
  std::string file;      // relative to the model directory
  std::string resource;  // the manifest's resource name ("path" or "path:start:end")
  std::string expected_sha256;
  std::string actual_sha256;  // empty when the bytes could not be read
  std::string message;        // for /readyz, the log and the audit record; names the file
};

struct ServedBytesPass {
  uint64_t bytes = 0;  // hashed in this pass
  std::optional<IntegrityFailure> failure;
};

struct ServedBytesPace {
  uint64_t bytes_per_second = 0;  // 0: as fast as one core hashes
  size_t chunk_bytes = 4u << 20;  // hashed between checks of the pace and of `cancel`
};

// Hashes every range of target.manifest as described above; with `only_files` (may be null)
// only the ranges of those files (paths relative to the directory). Errors: Cancelled when `cancel`
// (may be null) became true; InvalidArgument for a target without a manifest. A file that
// cannot be read, that is not a regular file (a FIFO, a symlink: refused at once, never waited
// on) or not of its signed size, or a mapping shorter than its signed range, is a failure, not
// an error.
Result<ServedBytesPass> CheckServedBytes(const IntegrityTarget& target, const ServedBytesPace& pace,
                                         const std::atomic<bool>* cancel = nullptr,
                                         const std::vector<std::string>* only_files = nullptr);

}  // namespace kimi::models
