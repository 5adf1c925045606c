#include "models/served_bytes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "kimi/hex.h"
#include "kimi/regular_file.h"
#include "models/oms_openssl.h"

namespace kimi::models {
namespace {

using Clock = std::chrono::steady_clock;

// Sleeps as long as hashing `done` bytes since `start` is ahead of the pace.
void KeepPace(const ServedBytesPace& pace, Clock::time_point start, uint64_t done) {
  if (pace.bytes_per_second == 0) return;
  const auto due = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(double(done) / double(pace.bytes_per_second)));
  if (due > Clock::now()) std::this_thread::sleep_until(due);
}

// Reads `length` bytes at `offset` of the range into `out`: from the mapping when there is
// one, else from the file. Returns false (with *why) when the bytes are not there. The file is
// opened without waiting and without following a link (kimi/regular_file.h): one that is not
// the regular file of its signed size is a failure, never a wait of the check's only thread.
class RangeReader {
 public:
  RangeReader(const IntegrityTarget& target, const VerifiedManifest::Entry& entry) {
    for (const MappedWeightFile& m : target.mapped) {
      if (m.file == entry.path) mapped_ = &m;
    }
    path_ = entry.path == "." ? target.directory : target.directory + "/" + entry.path;
    if (mapped_ != nullptr) return;
    Result<RegularFile> file = OpenRegularFile(path_);
    if (!file.ok()) {
      why_ = file.status().message();
      return;
    }
    if (const uint64_t signed_size = target.manifest->file_size(entry.path); file->size() != signed_size) {
      why_ = path_ + " holds " + std::to_string(file->size()) + " bytes, the signed manifest says " +
             std::to_string(signed_size);
      return;
    }
    file_ = std::move(file).value();
  }
  RangeReader(const RangeReader&) = delete;
  RangeReader& operator=(const RangeReader&) = delete;

  const std::string& why() const { return why_; }

  // The bytes [offset, offset + length), or nullptr when they cannot be read.
  const uint8_t* Read(uint64_t offset, size_t length, std::vector<uint8_t>* buffer) {
    if (!why_.empty()) return nullptr;
    if (mapped_ != nullptr) {
      if (offset + length > mapped_->size) {
        why_ = "the served mapping of " + mapped_->file + " holds " + std::to_string(mapped_->size) +
               " bytes, the signed range ends at " + std::to_string(offset + length);
        return nullptr;
      }
      // A page of the mapping past the file's end raises SIGBUS when read, and a truncated
      // served file took the daemon down that way: its size is asked first, each chunk.
      struct stat st {};
      if (::stat(path_.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) < offset + length) {
        why_ = path_ + " was truncated while served (" + std::to_string(st.st_size) + " bytes, the signed range ends at " +
               std::to_string(offset + length) + ")";
        return nullptr;
      }
      return mapped_->data + offset;
    }
    buffer->resize(length);
    size_t got = 0;
    while (got < length) {
      ssize_t n = ::pread(file_.fd(), buffer->data() + got, length - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        why_ = n == 0 ? path_ + " ends before its signed range does" : "cannot read " + path_ + ": " + std::strerror(errno);
        return nullptr;
      }
      got += static_cast<size_t>(n);
    }
    return buffer->data();
  }

 private:
  const MappedWeightFile* mapped_ = nullptr;
  std::string path_;
  RegularFile file_;
  std::string why_;
};

IntegrityFailure FailureOf(const VerifiedManifest::Entry& entry, std::string actual, const std::string& why) {
  IntegrityFailure f;
  f.file = entry.path;
  f.resource = entry.name;
  f.expected_sha256 = entry.sha256_hex;
  f.actual_sha256 = std::move(actual);
  f.message = f.actual_sha256.empty()
                  ? entry.name + ": the served bytes cannot be read (" + why + ")"
                  : entry.name + ": the served bytes hash to sha256:" + f.actual_sha256 +
                        ", the signed manifest says sha256:" + f.expected_sha256;
  return f;
}

}  // namespace

Result<ServedBytesPass> CheckServedBytes(const IntegrityTarget& target, const ServedBytesPace& pace,
                                         const std::atomic<bool>* cancel, const std::vector<std::string>* only_files) {
  if (target.manifest == nullptr) return Status::InvalidArgument("no verified manifest for " + target.digest);
  const size_t chunk = std::max<size_t>(pace.chunk_bytes, 4096);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return Status::Internal("EVP_MD_CTX_new failed");
  std::vector<uint8_t> buffer;
  ServedBytesPass pass;
  const Clock::time_point start = Clock::now();
  for (const VerifiedManifest::Entry& entry : target.manifest->entries()) {
    if (only_files != nullptr && std::find(only_files->begin(), only_files->end(), entry.path) == only_files->end()) {
      continue;
    }
    RangeReader reader(target, entry);
    if (EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return Status::Internal("SHA-256 init failed");
    for (uint64_t at = entry.start; at < entry.end;) {
      if (cancel != nullptr && cancel->load()) return Status::Cancelled("the served-bytes check was cancelled");
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, entry.end - at));
      const uint8_t* bytes = reader.Read(at, n, &buffer);
      if (bytes == nullptr) {
        pass.failure = FailureOf(entry, "", reader.why());
        return pass;
      }
      if (EVP_DigestUpdate(ctx.get(), bytes, n) != 1) return Status::Internal("SHA-256 update failed");
      at += n;
      pass.bytes += n;
      KeepPace(pace, start, pass.bytes);
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) return Status::Internal("SHA-256 final failed");
    std::string actual = HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
    if (actual != entry.sha256_hex) {
      pass.failure = FailureOf(entry, std::move(actual), "");
      return pass;
    }
  }
  return pass;
}

}  // namespace kimi::models
