// VerifiedStage: the directory the engine opens for a verified model version. The engine reads
// its small files (config.json, the tokenizer's ranks and configuration, the weight index) by
// name, after the verifier has read them by name: a file swapped between the two reads (a
// rename() and back takes a few milliseconds) was parsed without ever being verified, while
// every check afterwards saw the signed bytes again. So each signed file but the weight shards
// is read here once (through one descriptor, kimi/regular_file.h), checked against every
// manifest entry of its path, and written into a private directory (0700, made with mkdtemp):
// the bytes the engine parses are the bytes that were checked. The weight shards, which the
// engine maps and the served-bytes check hashes in the mapping (served_bytes.h), are too large
// to copy: each is opened here once and must be the very file the verifier hashed (device,
// inode, size: VerifiedManifest::verified_file), and the stage's entry is a link to that open
// descriptor (/proc/self/fd/N), not to the shard's name, which could have been renamed over
// since. Files outside the manifest are not there at all.
//
// The directory is removed, and the descriptors closed, when the VerifiedStage is destroyed;
// the engine has read what it needs by then (ChatService::Open reads every small file and maps
// every shard, and a mapping outlives its descriptor).
// Public header of models/: other folders include it.
// Thread safety: a value used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kimi/regular_file.h"
#include "kimi/status.h"
#include "models/oms_verifier.h"

namespace kimi::models {

// Signed files larger than this (by the size the manifest signs, not the size on disk) are
// linked, not copied (weight shards are linked whatever their size); a file the engine parses is
// far smaller.
inline constexpr uint64_t kMaxStagedFileBytes = 256ull << 20;

class VerifiedStage {
 public:
  // Stages `manifest`'s files of `model_dir` under a new directory in `parent` (made when
  // missing; "": the system's temporary directory), mode 0700. Corruption naming the file when a
  // file to copy is no longer a regular file of its signed size (a FIFO or a link is refused at
  // once, never waited on or followed) or its bytes do not match its entries, or when a file to
  // link is not the file that was verified; IOError when a file cannot be read or written.
  static Result<std::unique_ptr<VerifiedStage>> Create(const VerifiedManifest& manifest, const std::string& model_dir,
                                                       const std::string& parent);
  ~VerifiedStage();
  VerifiedStage(const VerifiedStage&) = delete;
  VerifiedStage& operator=(const VerifiedStage&) = delete;

  // The directory to open the engine on.
  const std::string& path() const { return path_; }

 private:
  explicit VerifiedStage(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<RegularFile> linked_;  // the verified files the stage's links name, held open
};

}  // namespace kimi::models
