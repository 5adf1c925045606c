#include "kimi/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>

#include "kimi/regular_file.h"

namespace kimi {
namespace {

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// A name no other writer uses: the target's, with this process and a counter.
std::string TemporaryName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

// Errors name the target, the file the caller asked for.
Result<int> CreateTemporary(const std::string& path, const std::string& temporary, unsigned mode) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return Errno("cannot write " + path);
  return fd;
}

Status SyncAndClose(int fd, const std::string& path) {
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced) errno = saved;
  return synced && closed ? Status::OK() : Errno("cannot sync " + path);
}

// All of `data` to `fd`. Errors name `path`.
Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("cannot write " + path);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

// Whether `temporary` still names the file open on `fd`: in a directory others can write, the
// name may have been given to another file or a link since it was created.
Status StillNames(int fd, const std::string& temporary) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Errno("cannot stat " + temporary);
  Result<FileIdentity> named = IdentityAt(temporary);
  if (!named.ok() || named->device != static_cast<uint64_t>(st.st_dev) ||
      named->inode != static_cast<uint64_t>(st.st_ino)) {
    return Status::IOError(temporary + " was replaced while it was written; nothing was published");
  }
  return Status::OK();
}

// Syncs and closes `fd`, the file created at `temporary`, and puts it in `path`'s place (or
// beside nothing, kRefuse), then syncs the directory; removes `temporary` when that fails.
Status Publish(int fd, const std::string& temporary, const std::string& path, IfExists if_exists) {
  Status placed = StillNames(fd, temporary);
  if (Status synced = SyncAndClose(fd, temporary); placed.ok()) placed = synced;
  if (!placed.ok()) {
    ::unlink(temporary.c_str());
    return placed;
  }
  if (if_exists == IfExists::kReplace) {
    if (::rename(temporary.c_str(), path.c_str()) != 0) placed = Errno("cannot rename " + temporary + " to " + path);
  } else if (::link(temporary.c_str(), path.c_str()) != 0) {
    placed = errno == EEXIST ? Status::AlreadyExists(path + " exists") : Errno("cannot create " + path);
  }
  if (!placed.ok() || if_exists == IfExists::kRefuse) ::unlink(temporary.c_str());
  KIMI_RETURN_IF_ERROR(placed);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Errno("cannot open " + dir);
  return SyncAndClose(dir_fd, dir);
}

}  // namespace

// A stream buffer over the writer's descriptor: what stream() is given goes to the file created,
// never to whatever its name may name later. The first error is kept for Commit().
class AtomicFileWriter::Buffer : public std::streambuf {
 public:
  Buffer(int fd, std::string path) : fd_(fd), path_(std::move(path)) { setp(data_, data_ + sizeof data_); }
  const Status& status() const { return status_; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    if (status_.ok()) status_ = WriteAll(fd_, pbase(), static_cast<size_t>(pptr() - pbase()), path_);
    setp(data_, data_ + sizeof data_);
    return status_.ok() ? 0 : -1;
  }

 private:
  int fd_;
  std::string path_;
  Status status_;
  char data_[1 << 16];
};

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temporary, int fd)
    : path_(std::move(path)),
      temporary_(std::move(temporary)),
      fd_(fd),
      buffer_(std::make_unique<Buffer>(fd, temporary_)),
      stream_(buffer_.get()) {}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path, unsigned mode) {
  std::string temporary = TemporaryName(path);
  KIMI_ASSIGN_OR_RETURN(int fd, CreateTemporary(path, temporary, mode));
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(temporary), fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_) return;
  ::close(fd_);
  ::unlink(temporary_.c_str());
}

Status AtomicFileWriter::Commit(IfExists if_exists) {
  stream_.flush();
  committed_ = true;  // the descriptor is closed and the temporary file removed on every path below
  if (!stream_ || !buffer_->status().ok()) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
    return buffer_->status().ok() ? Status::IOError("cannot write " + temporary_) : buffer_->status();
  }
  return Publish(fd_, temporary_, path_, if_exists);
}

// Straight to the descriptor rather than through a stream's buffer: the data may be a secret
// (a signing seed), and no copy of it is left in freed memory.
Status WriteFileAtomically(const std::string& path, std::string_view data, unsigned mode, IfExists if_exists) {
  const std::string temporary = TemporaryName(path);
  KIMI_ASSIGN_OR_RETURN(int fd, CreateTemporary(path, temporary, mode));
  if (Status written = WriteAll(fd, data.data(), data.size(), path); !written.ok()) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return written;
  }
  return Publish(fd, temporary, path, if_exists);
}

}  // namespace kimi
