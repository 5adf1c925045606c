#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kimi {

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return Status::NotFound(path + ": " + why);
    return Status::IOError(path + ": cannot open: " + why);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return Status::IOError(path + ": cannot stat: " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::unique_ptr<MappedFile>(new MappedFile(nullptr, 0));
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (p == MAP_FAILED) return Status::IOError(path + ": mmap failed: " + std::strerror(map_errno));
  return std::unique_ptr<MappedFile>(new MappedFile(static_cast<const uint8_t*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace kimi
