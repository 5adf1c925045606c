// Copying a model from a mounted medium (USB disk, ISO) into the model store's staging area.
//
// CopyModelTree() copies a model directory tree byte for byte: directories and
// regular files only; a symlink, fifo, socket or device in the source is refused (naming it),
// because the store holds plain files whose bytes the verifier can account for. The medium may
// change under the copy: each file is read through one descriptor opened without following a
// link or waiting, and must be the file listed (device, inode, size), else the copy fails. The
// copy is the parallel hasher's read (oms_hasher.h, one worker per core, largest file first): each
// file, or each shard of `shard_size` bytes, is read once with large sequential reads, hashed
// and written from the same buffer, so the medium is read once and the caller gets the
// SHA-256 of every range it wrote (CopyStats::digests, for VerifyRequest::known_digests).
// Every file is then made read-only (0400; directories are 0700) and every file and directory
// fsync()ed, so a copy that returned OK survives a power cut. Progress (bytes, rate, ETA) goes to the callback on the calling thread at most every
// `progress_interval`, and once at the end. Nothing is verified here: the caller verifies
// the destination against the signature.
//
// On error the partial destination is left for the caller to remove (it is a staging
// directory the caller owns).
//
// Thread safety: reentrant; the callback runs on the calling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "kimi/status.h"
#include "models/oms_hasher.h"

namespace kimi::models {

struct CopyOptions {
  size_t buffer_bytes = 8u << 20;  // per worker
  unsigned threads = 0;            // 0: one per core
  // Hash in ranges of this many bytes (the signature's shard size); 0: whole files.
  uint64_t shard_size = 0;
  HashProgressFn progress;  // may be empty; HashProgress describes bytes copied
  std::chrono::milliseconds progress_interval{250};
  // When set and true, the copy stops at the next chunk with Cancelled (daemon shutdown).
  const std::atomic<bool>* cancel = nullptr;
};

struct CopyStats {
  uint64_t files = 0;
  uint64_t bytes = 0;
  KnownDigests digests;  // of every range written, by RangeKey(relative path, offset, length)
};

// Copies the directory `source` to `destination`, which must not exist.
Result<CopyStats> CopyModelTree(const std::string& source, const std::string& destination, const CopyOptions& options);

// fsync() of a directory, so an entry created or renamed in it is durable.
Status SyncDirectory(const std::string& dir);

}  // namespace kimi::models
