// A read-only memory mapping of a whole file, released on destruction.
//
// Owns the mapping. Thread safety: immutable after Open(); any thread may read the bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kimi/status.h"

namespace kimi {

class MappedFile {
 public:
  // Maps a regular file read-only. An empty file gives size() == 0 and data() == nullptr.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MappedFile(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  uint64_t size_;
};

}  // namespace kimi
