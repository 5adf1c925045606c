// Parallel SHA-256 of files and file ranges: the part of model verification that touches
// every byte (1.4 TiB for a K3 checkpoint), so it is built to be bounded by the disk.
//
// HashRanges() spreads the ranges over one worker per core (largest first, so one huge file
// does not start last), reads each with large sequential pread() calls into a per-worker
// buffer after posix_fadvise(SEQUENTIAL), and feeds OpenSSL's EVP SHA-256 (SHA-NI where the
// CPU has it). Progress (bytes, rate, ETA) is reported on the calling thread. A range with
// `copy_to` is also written, from the same buffer, to that file at the same offset: import
// copies a model and hashes it in one read of the medium.
// Public header of models/: other folders include it.
// Thread safety: HashRanges() may be called from several threads; each call owns its
// workers. The progress callback runs only on the calling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/regular_file.h"
#include "kimi/status.h"

namespace kimi::models {

struct HashRange {
  // A regular file, opened without following a link or waiting (kimi/regular_file.h): a FIFO,
  // socket, device or symlink found here is an error, and the range is read from that descriptor.
  std::string path;
  uint64_t offset = 0;
  uint64_t length = 0;  // exact number of bytes; a file that ends earlier is an error
  bool to_eof = false;  // whole-file hashing: the file must end exactly at offset + length
  // When set, the bytes read are also written to this file at the same offset (it is created
  // when missing; ranges of one file may go to different workers). Not synced here.
  std::string copy_to;
  // When set, the file opened must be this one (device, inode) and of this size: what the
  // caller listed, not another file renamed over its name since.
  std::optional<FileIdentity> planned;
};

// Raw digests computed elsewhere, keyed by RangeKey(); see VerifyRequest::known_digests.
using KnownDigests = std::map<std::string, std::string>;
// `name` is the file's path relative to the model root, '/'-separated.
std::string RangeKey(std::string_view name, uint64_t offset, uint64_t length);

struct HashProgress {
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  double bytes_per_second = 0;
  double eta_seconds = 0;  // 0 when unknown or done
  bool finished = false;
};

using HashProgressFn = std::function<void(const HashProgress&)>;

// The progress of a job that started at `start` and has done bytes_done of bytes_total:
// the average rate since the start and the ETA at that rate. Shared by hashing and copying.
HashProgress ProgressSince(std::chrono::steady_clock::time_point start, uint64_t bytes_done, uint64_t bytes_total,
                           bool finished);

struct HashOptions {
  unsigned threads = 0;             // 0: one per online core
  size_t buffer_bytes = 8u << 20;   // per worker
  HashProgressFn progress;          // may be empty
  std::chrono::milliseconds progress_interval{250};
  // When set and true, hashing stops at the next chunk with Cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // When set, receives the CPU seconds of each worker (one entry per worker): the busiest one's
  // is the wall time the hashing takes with a free core per worker, which a benchmark on a
  // loaded machine can still measure.
  std::vector<double>* worker_cpu_seconds = nullptr;
};

// Raw 32-byte digests, one per range in the order given; an error names the file (IOError, or
// InvalidArgument for what is not a regular file, NotFound for what is gone).
Result<std::vector<std::string>> HashRanges(const std::vector<HashRange>& ranges, const HashOptions& options);

// The straightforward reference: one thread, one range after the other. Used by tests to
// check HashRanges() and by the benchmark as the single-core figure.
Result<std::vector<std::string>> HashRangesSerial(const std::vector<HashRange>& ranges, size_t buffer_bytes);

}  // namespace kimi::models
