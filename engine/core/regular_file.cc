#include "kimi/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kimi {
namespace {

Status OpenError(const std::string& path, int err, FinalLink links) {
  const std::string why = std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound("cannot open " + path + ": " + why);
  if (err == ELOOP && links == FinalLink::kRefuse) {
    return Status::InvalidArgument(path + " is a symbolic link; only a regular file is read here");
  }
  return Status::IOError("cannot open " + path + ": " + why);
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

FileIdentity IdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size)};
}

}  // namespace

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      identity_(other.identity_),
      mode_(other.mode_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    identity_ = other.identity_;
    mode_ = other.mode_;
  }
  return *this;
}

Result<RegularFile> OpenRegularFile(const std::string& path, FinalLink links) {
  const int flags =
      O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (links == FinalLink::kRefuse ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return OpenError(path, errno, links);
  // The descriptor's own file from here on, whatever the name names by now.
  struct stat st {};
  Status refused;
  if (::fstat(fd, &st) != 0) {
    refused = Status::IOError("cannot stat " + path + ": " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    refused =
        Status::InvalidArgument(path + " is " + KindOf(st.st_mode) + "; only a regular file is read here");
  } else if (const int fl = ::fcntl(fd, F_GETFL); fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    // Reads of a regular file never wait anyway, but what the descriptor is handed to (a
    // stream, mmap) should see an ordinary one.
    refused = Status::IOError("cannot set up " + path + ": " + std::strerror(errno));
  }
  if (!refused.ok()) {
    ::close(fd);
    return refused;
  }
  return RegularFile(fd, path, IdentityOf(st), static_cast<unsigned>(st.st_mode & 07777));
}

Result<std::string> ReadToEnd(const RegularFile& file, uint64_t max_bytes) {
  auto too_large = [&] {
    return Status::InvalidArgument(file.path() + " is larger than " + std::to_string(max_bytes) + " bytes");
  };
  if (file.size() > max_bytes) return too_large();
  std::string bytes;
  bytes.reserve(static_cast<size_t>(file.size()));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(file.fd(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("cannot read " + file.path() + ": " + std::strerror(errno));
    if (n == 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
    if (bytes.size() > max_bytes) return too_large();  // grew while read
  }
}

Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes, FinalLink links) {
  KIMI_ASSIGN_OR_RETURN(RegularFile file, OpenRegularFile(path, links));
  return ReadToEnd(file, max_bytes);
}

Result<FileIdentity> IdentityAt(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return Status::NotFound("cannot stat " + path + ": " + std::strerror(err));
    return Status::IOError("cannot stat " + path + ": " + std::strerror(err));
  }
  return IdentityOf(st);
}

}  // namespace kimi
