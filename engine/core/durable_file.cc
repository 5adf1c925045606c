#include "kimi/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

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

// Puts the synced `temporary` in `path`'s place (or beside nothing, kRefuse) and syncs the
// directory; removes `temporary` when that fails.
Status Publish(const std::string& temporary, const std::string& path, IfExists if_exists) {
  Status placed;
  if (if_exists == IfExists::kReplace) {
    if (::rename(temporary.c_str(), path.c_str()) != 0) placed = Errno("cannot rename " + temporary + " to " + path);
  } else if (::link(temporary.c_str(), path.c_str()) != 0) {
    placed = errno == EEXIST ? Status::AlreadyExists(path + " exists") : Errno("cannot create " + path);
  }
  if (!placed.ok() || if_exists == IfExists::kRefuse) ::unlink(temporary.c_str());
  KIMI_RETURN_IF_ERROR(placed);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open " + dir);
  return SyncAndClose(fd, dir);
}

}  // namespace

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path, unsigned mode) {
  std::string temporary = TemporaryName(path);
  KIMI_ASSIGN_OR_RETURN(int fd, CreateTemporary(path, temporary, mode));
  ::close(fd);
  std::unique_ptr<AtomicFileWriter> writer(new AtomicFileWriter(path, std::move(temporary)));
  writer->stream_.open(writer->temporary_, std::ios::binary | std::ios::trunc);
  if (!writer->stream_) return Status::IOError("cannot open " + writer->temporary_);
  return writer;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_) return;
  stream_.close();
  ::unlink(temporary_.c_str());
}

Status AtomicFileWriter::Commit(IfExists if_exists) {
  stream_.close();
  if (!stream_) return Status::IOError("cannot write " + temporary_);
  const int fd = ::open(temporary_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open " + temporary_);
  KIMI_RETURN_IF_ERROR(SyncAndClose(fd, temporary_));
  committed_ = true;  // Publish removes the temporary file itself when it fails
  return Publish(temporary_, path_, if_exists);
}

// Straight to the descriptor rather than through a stream's buffer: the data may be a secret
// (a signing seed), and no copy of it is left in freed memory.
Status WriteFileAtomically(const std::string& path, std::string_view data, unsigned mode, IfExists if_exists) {
  const std::string temporary = TemporaryName(path);
  KIMI_ASSIGN_OR_RETURN(int fd, CreateTemporary(path, temporary, mode));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status failed = Errno("cannot write " + path);
      ::close(fd);
      ::unlink(temporary.c_str());
      return failed;
    }
    done += static_cast<size_t>(n);
  }
  if (Status synced = SyncAndClose(fd, temporary); !synced.ok()) {
    ::unlink(temporary.c_str());
    return synced;
  }
  return Publish(temporary, path, if_exists);
}

}  // namespace kimi
