#include "models/model_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

struct Plan {
  std::vector<fs::path> dirs;                            // relative, parents first
  std::vector<std::pair<fs::path, FileIdentity>> files;  // relative path, the file seen there
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
    // Lexically: fs::relative() would follow a symlink and name its target instead.
    fs::path rel = it->path().lexically_relative(root);
    if (fs::is_symlink(st)) {
      return Status::InvalidArgument("the source has a symlink, " + rel.string() +
                                     "; the model store holds plain files only");
    }
    if (fs::is_directory(st)) {
      plan.dirs.push_back(rel);
    } else if (fs::is_regular_file(st)) {
      // The copy reads this very file (HashRange::planned), not one renamed over it since.
      KIMI_ASSIGN_OR_RETURN(FileIdentity seen, IdentityAt(it->path().string()));
      plan.files.emplace_back(rel, seen);
      plan.bytes += seen.size;
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

// The reads of the copy: one range per file, or per shard of `shard_size` bytes, each
// written to its place in the destination as it is hashed.
std::vector<HashRange> CopyRanges(const Plan& plan, const fs::path& root, const fs::path& destination,
                                  uint64_t shard_size, std::vector<std::string>* names) {
  std::vector<HashRange> ranges;
  for (const auto& [rel, seen] : plan.files) {
    std::string from = (root / rel).string();
    std::string to = (destination / rel).string();
    const uint64_t size = seen.size;
    uint64_t step = shard_size == 0 ? std::max<uint64_t>(size, 1) : shard_size;
    uint64_t start = 0;
    do {  // an empty file is one empty range, so that it is created
      uint64_t length = std::min(step, size - start);
      ranges.push_back({from, start, length, /*to_eof=*/start + length == size, to, seen});
      names->push_back(rel.generic_string());
      start += length;
    } while (start < size);
  }
  return ranges;
}

// Makes a copied file read-only (0400) and durable, the mode with it. The store never writes
// a verified copy again, so no process of the service account opens one for writing by
// mistake, and nothing else may open it at all.
Status SealFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Errno("cannot open", path);
  if (::fchmod(fd.get(), 0400) != 0) return Errno("cannot make read-only", path);
  if (::fsync(fd.get()) != 0) return Errno("cannot sync", path);
  if (fd.Close() != 0) return Errno("cannot close", path);
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

  // The model store is in the data directory: the service account's alone (store/owner_only.h).
  if (::mkdir(destination.c_str(), 0700) != 0) return Errno("cannot create", destination);
  for (const fs::path& d : plan.dirs) {
    std::string to = (fs::path(destination) / d).string();
    if (::mkdir(to.c_str(), 0700) != 0) return Errno("cannot create", to);
  }
  std::vector<std::string> names;
  std::vector<HashRange> ranges = CopyRanges(plan, root, destination, options.shard_size, &names);
  HashOptions hashing;
  hashing.threads = options.threads;
  hashing.buffer_bytes = options.buffer_bytes;
  hashing.progress = options.progress;
  hashing.progress_interval = options.progress_interval;
  hashing.cancel = options.cancel;
  Result<std::vector<std::string>> digests = HashRanges(ranges, hashing);
  if (!digests.ok()) return digests.status().code() == Status::Code::kCancelled
                               ? Status::Cancelled("copy of " + source + " cancelled")
                               : digests.status();
  CopyStats stats{plan.files.size(), plan.bytes, {}};
  for (size_t i = 0; i < ranges.size(); ++i) {
    stats.digests[RangeKey(names[i], ranges[i].offset, ranges[i].length)] = std::move((*digests)[i]);
  }
  for (const auto& [rel, seen] : plan.files)
    KIMI_RETURN_IF_ERROR(SealFile((fs::path(destination) / rel).string()));
  // Children before parents: a directory's entries are durable once it is synced.
  for (auto it = plan.dirs.rbegin(); it != plan.dirs.rend(); ++it) {
    KIMI_RETURN_IF_ERROR(SyncDirectory((fs::path(destination) / *it).string()));
  }
  KIMI_RETURN_IF_ERROR(SyncDirectory(destination));
  return stats;
}

}  // namespace kimi::models
