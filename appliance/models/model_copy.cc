#include "models/model_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

struct Plan {
  std::vector<fs::path> dirs;                           // relative, parents first
  std::vector<std::pair<fs::path, uint64_t>> files;     // relative path, size
  uint64_t bytes = 0;
};

Status Errno(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

// Lists what to copy and refuses what the store must not hold, before a byte is written.
Result<Plan> PlanCopy(const fs::path& root) {
  Plan plan;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) return Status::IOError("cannot list " + root.string() + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IOError("cannot list " + root.string() + ": " + ec.message());
    fs::file_status st = it->symlink_status(ec);
    if (ec) return Status::IOError("cannot stat " + it->path().string() + ": " + ec.message());
    fs::path rel = fs::relative(it->path(), root);
    if (fs::is_symlink(st)) {
      return Status::InvalidArgument("the source has a symlink, " + rel.string() +
                                     "; the model store holds plain files only");
    }
    if (fs::is_directory(st)) {
      plan.dirs.push_back(rel);
    } else if (fs::is_regular_file(st)) {
      uint64_t size = fs::file_size(it->path(), ec);
      if (ec) return Status::IOError("cannot stat " + it->path().string() + ": " + ec.message());
      plan.files.emplace_back(rel, size);
      plan.bytes += size;
    } else {
      return Status::InvalidArgument("the source has " + rel.string() + ", which is not a regular file or directory");
    }
  }
  if (ec) return Status::IOError("cannot list " + root.string() + ": " + ec.message());
  return plan;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Progress reporting shared by the file copies of one call.
struct Meter {
  const CopyOptions& options;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_report = start;
  uint64_t done = 0;
  uint64_t total = 0;

  void Add(uint64_t n) {
    done += n;
    if (!options.progress) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_report < options.progress_interval) return;
    last_report = now;
    options.progress(ProgressSince(start, done, total, false));
  }
  void Finish() {
    if (options.progress) options.progress(ProgressSince(start, done, total, true));
  }
};

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  size_t written = 0;
  while (written < size) {
    ssize_t w = ::write(fd, data + written, size - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    written += static_cast<size_t>(w);
  }
  return Status::OK();
}

Status CopyFile(const std::string& from, const std::string& to, uint64_t expected_size, std::vector<char>& buffer,
                Meter& meter) {
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (in.get() < 0) return Errno("cannot open", from);
  posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (out.get() < 0) return Errno("cannot create", to);
  // In-kernel copy first (no trip through user space; a reflink where the filesystem has
  // them); read/write when the kernel cannot copy between these two files.
  uint64_t copied = 0;
  bool read_write = false;
  for (;;) {
    if (meter.options.cancel != nullptr && meter.options.cancel->load()) {
      return Status::Cancelled("copy of " + from + " cancelled");
    }
    ssize_t n;
    if (!read_write) {
      n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, buffer.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && copied == 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        read_write = true;
        continue;
      }
      if (n < 0) return Errno("cannot copy", from);
    } else {
      n = ::read(in.get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("cannot read", from);
      KIMI_RETURN_IF_ERROR(WriteAll(out.get(), buffer.data(), static_cast<size_t>(n), to));
    }
    if (n == 0) break;
    copied += static_cast<uint64_t>(n);
    meter.Add(static_cast<uint64_t>(n));
  }
  if (copied != expected_size) {
    return Status::IOError(from + " changed size while it was copied (" + std::to_string(expected_size) + " -> " +
                           std::to_string(copied) + " bytes)");
  }
  if (::fsync(out.get()) != 0) return Errno("cannot sync", to);
  if (out.Close() != 0) return Errno("cannot close", to);
  return Status::OK();
}

}  // namespace

Status SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Errno("cannot open directory", dir);
  if (::fsync(fd.get()) != 0) return Errno("cannot sync directory", dir);
  return Status::OK();
}

Result<CopyStats> CopyModelTree(const std::string& source, const std::string& destination, const CopyOptions& options) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(source, ec);
  if (ec || !fs::exists(st)) return Status::NotFound("no model at " + source);
  if (fs::is_symlink(st)) return Status::InvalidArgument(source + " is a symlink; give the real path");
  if (fs::exists(destination, ec)) return Status::AlreadyExists(destination + " exists");

  if (!fs::is_directory(st)) return Status::InvalidArgument(source + " is not a directory; a model is imported as a directory");
  fs::path root(source);
  KIMI_ASSIGN_OR_RETURN(Plan plan, PlanCopy(root));

  if (::mkdir(destination.c_str(), 0755) != 0) return Errno("cannot create", destination);
  for (const fs::path& d : plan.dirs) {
    std::string to = (fs::path(destination) / d).string();
    if (::mkdir(to.c_str(), 0755) != 0) return Errno("cannot create", to);
  }
  Meter meter{options};
  meter.total = plan.bytes;
  std::vector<char> buffer(std::max<size_t>(options.buffer_bytes, 4096));
  for (const auto& [rel, size] : plan.files) {
    KIMI_RETURN_IF_ERROR(CopyFile((root / rel).string(), (fs::path(destination) / rel).string(), size, buffer, meter));
  }
  // Children before parents: a directory's entries are durable once it is synced.
  for (auto it = plan.dirs.rbegin(); it != plan.dirs.rend(); ++it) {
    KIMI_RETURN_IF_ERROR(SyncDirectory((fs::path(destination) / *it).string()));
  }
  KIMI_RETURN_IF_ERROR(SyncDirectory(destination));
  meter.Finish();
  return CopyStats{plan.files.size(), plan.bytes};
}

}  // namespace kimi::models
