#include "auth/server_secret.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kimi/durable_file.h"
#include "kimi/regular_file.h"

namespace kimi::auth {
namespace {

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// Neither a link nor a FIFO planted in the data directory is followed or waited on.
Result<std::array<uint8_t, 32>> ReadSecret(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(RegularFile file, OpenRegularFile(path));
  std::array<uint8_t, 32> bytes{};
  if ((file.mode() & (S_IRWXG | S_IRWXO)) != 0) {
    return Status::FailedPrecondition(path + " is readable by group or others; chmod 600 it");
  }
  if (file.size() != bytes.size()) {
    return Status::Corruption(path + " is " + std::to_string(file.size()) + " bytes, expected 32");
  }
  if (::read(file.fd(), bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    return Errno("cannot read " + path);
  }
  return bytes;
}

}  // namespace

Result<ServerSecret> ServerSecret::LoadOrCreate(const std::string& data_dir, int64_t hashed_credentials) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  std::error_code ec;
  if (!std::filesystem::exists(data_dir, ec)) {
    std::filesystem::create_directories(data_dir, ec);
    if (ec) return Status::IOError("cannot create data directory " + data_dir + ": " + ec.message());
    std::filesystem::permissions(data_dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace, ec);
  }
  std::string path = (std::filesystem::path(data_dir) / kServerSecretFile).string();
  std::array<uint8_t, 32> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  // Written under a temporary name and linked into place (kimi/durable_file.h): a racing
  // process sees either no file or the whole secret, and exactly one of them wins.
  if (!std::filesystem::exists(path, ec) && hashed_credentials > 0) {
    return Status::FailedPrecondition(path + " is missing while the database holds " +
                                      std::to_string(hashed_credentials) +
                                      " API keys and sessions hashed with it: restore it from the backup "
                                      "(docs/operations.md); a new secret would make every one of them fail");
  }
  if (!std::filesystem::exists(path, ec)) {
    Status written = WriteFileAtomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                                         0600, IfExists::kRefuse);
    sodium_memzero(bytes.data(), bytes.size());
    if (written.code() != Status::Code::kAlreadyExists) KIMI_RETURN_IF_ERROR(written);
  }
  KIMI_ASSIGN_OR_RETURN(bytes, ReadSecret(path));
  return ServerSecret(bytes);
}

Digest ServerSecret::KeyedHash(std::string_view data) const {
  Digest out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
                     bytes_.data(), bytes_.size());
  return out;
}

bool DigestEquals(const Digest& a, const Digest& b) { return sodium_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace kimi::auth
