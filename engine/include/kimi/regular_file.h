// Opening a file that someone else may change: the model directories, the media an import reads,
// the data directory. A name looked at first (stat, a directory listing) and opened afterwards
// may by then be a FIFO, whose open(2) for reading blocks until a writer comes (forever, and with
// it the thread that must check, copy or stop), a symlink to a file elsewhere, or another file.
// OpenRegularFile() opens without blocking (O_NONBLOCK, cleared again once the file is known to
// be regular), without following a link in the last component unless asked, and answers with the
// descriptor and what fstat(2) says of that descriptor, not of the name: read, hash and copy from
// that descriptor, never by the name again. Anything but a regular file is refused, naming it.
//
// Thread safety: no shared state. A RegularFile is a value owned by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "kimi/status.h"

namespace kimi {

// What names one file while it exists (device and inode), with the size it had when seen.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  bool operator==(const FileIdentity&) const = default;
};

// Whether a symlink as the last component is opened (its target must still be a regular file)
// or refused. Links in the directories above are resolved either way.
enum class FinalLink { kRefuse, kFollow };

// An open regular file; closes its descriptor when destroyed. Move-only.
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(int fd, std::string path, FileIdentity identity, unsigned mode)
      : fd_(fd), path_(std::move(path)), identity_(identity), mode_(mode) {}
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }  // as opened; for messages
  // As fstat(2) saw the descriptor when it was opened.
  const FileIdentity& identity() const { return identity_; }
  uint64_t size() const { return identity_.size; }
  unsigned mode() const { return mode_; }  // st_mode's permission bits

 private:
  int fd_ = -1;
  std::string path_;
  FileIdentity identity_;
  unsigned mode_ = 0;
};

// Opens `path` for reading as described above. Errors: NotFound when nothing is there;
// InvalidArgument naming the path when it is a symlink (FinalLink::kRefuse) or not a regular
// file (FIFO, socket, device, directory); IOError otherwise.
Result<RegularFile> OpenRegularFile(const std::string& path, FinalLink links = FinalLink::kRefuse);

// The file's bytes from its current offset to its end, through its descriptor. Errors:
// InvalidArgument when there are more than `max_bytes` (the file may grow while read); IOError.
Result<std::string> ReadToEnd(const RegularFile& file, uint64_t max_bytes);

// OpenRegularFile() then ReadToEnd(), with their errors.
Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes,
                                    FinalLink links = FinalLink::kRefuse);

// The identity of what `path` names now, without following a link (lstat(2)). Errors: NotFound,
// IOError.
Result<FileIdentity> IdentityAt(const std::string& path);

}  // namespace kimi
