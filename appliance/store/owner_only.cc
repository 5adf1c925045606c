#include "store/owner_only.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kimi::store {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

constexpr mode_t kGroupOrOther = S_IRWXG | S_IRWXO;

// Only regular files and directories are changed (a socket or FIFO in the directory is left
// alone). The change goes through a descriptor opened without following a link (O_NOFOLLOW
// fails with ELOOP on one) and checked to be the file first looked at, so a link swapped in
// between cannot redirect it. *changed says whether the mode had group or other bits.
Status RestrictToOwner(const std::string& path, bool* changed) {
  *changed = false;
  struct stat seen {};
  if (::lstat(path.c_str(), &seen) != 0) return errno == ENOENT ? Status::OK() : Errno("cannot stat", path);
  if (!(S_ISREG(seen.st_mode) || S_ISDIR(seen.st_mode)) || (seen.st_mode & kGroupOrOther) == 0) return Status::OK();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno == ENOENT || errno == ELOOP ? Status::OK() : Errno("cannot open", path);
  struct stat st {};
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = Errno("cannot stat", path);
  } else if (st.st_dev == seen.st_dev && st.st_ino == seen.st_ino && (st.st_mode & kGroupOrOther) != 0) {
    if (::fchmod(fd, st.st_mode & (S_IRWXU | S_ISVTX)) != 0) {
      s = Errno("cannot restrict the mode of", path);
    } else {
      *changed = true;
    }
  }
  ::close(fd);
  return s;
}

}  // namespace

Status PrepareOwnerOnlyDatabase(const std::string& db_path) {
  // SQLite follows a link, and would keep the database and its journals (0644 as it finds
  // them) wherever the link points: a database of the data directory is a file in it.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    struct stat st {};
    const std::string path = db_path + suffix;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Status::FailedPrecondition(path + " is a symbolic link; a database of the data directory must be a "
                                        "regular file in it (move the file it points to in its place)");
    }
  }
  const int fd = ::open(db_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd >= 0) {
    ::close(fd);  // an empty file is an empty SQLite database
  } else if (errno != EEXIST) {
    return Errno("cannot create", db_path);
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    bool changed = false;
    KIMI_RETURN_IF_ERROR(RestrictToOwner(db_path + suffix, &changed));
  }
  return Status::OK();
}

Result<std::vector<std::string>> RestrictTreeToOwner(const std::string& dir,
                                                     std::span<const std::string> left_as_found) {
  namespace fs = std::filesystem;
  std::vector<std::string> changed_paths;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return changed_paths;
  const auto visit = [&](const std::string& path) -> Status {
    bool changed = false;
    KIMI_RETURN_IF_ERROR(RestrictToOwner(path, &changed));
    if (changed) changed_paths.push_back(path);
    return Status::OK();
  };
  KIMI_RETURN_IF_ERROR(visit(dir));
  // The iterator does not descend into linked directories; links themselves are skipped.
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    const std::string path = it->path().string();
    if (std::find(left_as_found.begin(), left_as_found.end(), path) != left_as_found.end()) continue;
    KIMI_RETURN_IF_ERROR(visit(path));
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  return changed_paths;
}

}  // namespace kimi::store
