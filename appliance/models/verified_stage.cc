#include "models/verified_stage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "audit/hash.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// The whole file, read through one descriptor (no link followed), at most kMaxStagedFileBytes.
Result<std::string> ReadOnce(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Errno("cannot open " + path);
  std::string bytes;
  char buffer[1 << 16];
  Status status = Status::OK();
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = Errno("cannot read " + path);
      break;
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    if (bytes.size() > kMaxStagedFileBytes) {
      status = Status::InvalidArgument(path + " grew past " + std::to_string(kMaxStagedFileBytes) + " bytes");
      break;
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return bytes;
}

Status WriteNew(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Errno("cannot create " + path);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return Errno("cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0 ? Status::OK() : Errno("cannot write " + path);
}

// `bytes` against every entry of the manifest for `file`: each range's digest, and the file's
// length the last range ends at.
Status CheckAgainstEntries(const VerifiedManifest& manifest, const std::string& file, const std::string& bytes) {
  uint64_t end = 0;
  for (const VerifiedManifest::Entry& e : manifest.entries()) {
    if (e.path != file) continue;
    end = std::max(end, e.end);
    if (e.end > bytes.size() || e.start > e.end) {
      return Status::Corruption(file + " changed after it was verified: it ends before its signed range " + e.name);
    }
    const std::string actual = audit::ToHex(audit::Sha256(std::string_view(bytes).substr(e.start, e.end - e.start)));
    if (actual != e.sha256_hex) {
      return Status::Corruption(file + " changed after it was verified: " + e.name + " hashes to sha256:" + actual +
                                ", the signed manifest says sha256:" + e.sha256_hex);
    }
  }
  if (end != bytes.size()) {
    return Status::Corruption(file + " changed after it was verified: " + std::to_string(bytes.size()) +
                              " bytes, the signed manifest covers " + std::to_string(end));
  }
  return Status::OK();
}

// Whether `path` (relative to the model root) is a weight shard: linked, not copied.
bool IsWeightShard(const std::string& path) {
  constexpr std::string_view kSuffix = ".safetensors";
  return path.size() >= kSuffix.size() && path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

}  // namespace

Result<std::unique_ptr<VerifiedStage>> VerifiedStage::Create(const VerifiedManifest& manifest,
                                                             const std::string& model_dir, const std::string& parent) {
  std::error_code ec;
  const fs::path under = parent.empty() ? fs::temp_directory_path(ec) : fs::path(parent);
  if (!ec) fs::create_directories(under, ec);
  if (ec) return Status::IOError("cannot create " + under.string() + ": " + ec.message());
  std::string pattern = (under / "load-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return Errno("cannot create a directory in " + parent);
  std::unique_ptr<VerifiedStage> stage(new VerifiedStage(pattern));  // removes it on any failure below
  const fs::path root = fs::absolute(model_dir, ec);
  if (ec) return Status::IOError("cannot resolve " + model_dir + ": " + ec.message());
  for (const std::string& file : manifest.files()) {
    // A single-file model's one resource is the root itself ("."): nothing the engine opens by name.
    if (file == "." || file.empty()) continue;
    const fs::path source = root / file, target = fs::path(stage->path_) / file;
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Status::IOError("cannot create " + target.parent_path().string() + ": " + ec.message());
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0) return Errno("cannot read " + source.string());
    if (IsWeightShard(file) || static_cast<uint64_t>(st.st_size) > kMaxStagedFileBytes) {
      if (::symlink(source.c_str(), target.c_str()) != 0) return Errno("cannot link " + target.string());
      continue;
    }
    KIMI_ASSIGN_OR_RETURN(std::string bytes, ReadOnce(source.string()));
    KIMI_RETURN_IF_ERROR(CheckAgainstEntries(manifest, file, bytes));
    KIMI_RETURN_IF_ERROR(WriteNew(target.string(), bytes));
  }
  return stage;
}

VerifiedStage::~VerifiedStage() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace kimi::models
