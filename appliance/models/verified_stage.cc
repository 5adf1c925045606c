#include "models/verified_stage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "audit/hash.h"
#include "kimi/regular_file.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// The bytes of `file` (signed as `signed_size` bytes), read through one descriptor opened
// without following a link or waiting (kimi/regular_file.h). Anything but a regular file of its
// signed size is a file changed since verification.
Result<std::string> ReadSigned(const std::string& path, const std::string& file, uint64_t signed_size) {
  auto changed = [&](const std::string& how) {
    return Status::Corruption(file + " changed after it was verified: " + how);
  };
  Result<RegularFile> opened = OpenRegularFile(path);
  if (opened.status().code() == Status::Code::kInvalidArgument) return changed(opened.status().message());
  if (!opened.ok()) return opened.status();
  if (opened->size() != signed_size) {
    return changed(std::to_string(opened->size()) + " bytes, the signed manifest covers " +
                   std::to_string(signed_size));
  }
  Result<std::string> bytes = ReadToEnd(*opened, signed_size);
  if (bytes.status().code() == Status::Code::kInvalidArgument) return changed("it grew while it was read");
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

// `file` opened again for the engine, which must find there the very file whose bytes the
// verifier hashed: a shard renamed over since would be mapped and served unverified until the
// served-bytes check after the load found it. A link is followed (a signature may allow links
// inside the model): what decides is the file it leads to.
Result<RegularFile> OpenVerified(const VerifiedManifest& manifest, const std::string& path, const std::string& file) {
  const FileIdentity* verified = manifest.verified_file(file);
  if (verified == nullptr) return Status::Internal(file + " has no verified file in its manifest");
  Result<RegularFile> opened = OpenRegularFile(path, FinalLink::kFollow);
  if (opened.status().code() == Status::Code::kInvalidArgument || opened.status().code() == Status::Code::kNotFound) {
    return Status::Corruption(file + " changed after it was verified: " + opened.status().message());
  }
  if (!opened.ok()) return opened.status();
  if (opened->identity() != *verified) {
    const std::string sizes = opened->size() == verified->size
                                  ? ""
                                  : " (" + std::to_string(opened->size()) + " bytes, the one verified " +
                                        std::to_string(verified->size) + ")";
    return Status::Corruption(file + " changed after it was verified: another file is in place of the one verified" +
                              sizes);
  }
  return opened;
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
    // Copied or linked as the manifest says, never as the disk says now: a small signed file
    // grown (sparsely) past the limit after verification would otherwise have been linked.
    const uint64_t signed_size = manifest.file_size(file);
    if (IsWeightShard(file) || signed_size > kMaxStagedFileBytes) {
      // Linked to the descriptor, not the name: the engine opens the file checked here.
      KIMI_ASSIGN_OR_RETURN(RegularFile verified, OpenVerified(manifest, source.string(), file));
      const std::string descriptor = "/proc/self/fd/" + std::to_string(verified.fd());
      if (::symlink(descriptor.c_str(), target.c_str()) != 0) return Errno("cannot link " + target.string());
      stage->linked_.push_back(std::move(verified));
      continue;
    }
    KIMI_ASSIGN_OR_RETURN(std::string bytes, ReadSigned(source.string(), file, signed_size));
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
