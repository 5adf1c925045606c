#include "io/mapped_file.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "kimi/regular_file.h"

namespace kimi {

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  // A weight file of the engine's directory may be a link (the appliance links the verified
  // shards), but never a FIFO or device whose open() waits for a writer.
  KIMI_ASSIGN_OR_RETURN(RegularFile file, OpenRegularFile(path, FinalLink::kFollow));
  const uint64_t size = file.size();
  if (size == 0) return std::unique_ptr<MappedFile>(new MappedFile(nullptr, 0));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  const int map_errno = errno;  // the mapping keeps the file alive once the descriptor closes
  if (p == MAP_FAILED) return Status::IOError(path + ": mmap failed: " + std::strerror(map_errno));
  return std::unique_ptr<MappedFile>(new MappedFile(static_cast<const uint8_t*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace kimi
