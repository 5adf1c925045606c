// Writes one safetensors file in a single streaming pass: every tensor is declared first (name,
// dtype, shape), then the header is written and the tensors' bytes are appended in declaration
// order, one tensor at a time, so a caller never holds more than one tensor in memory.
//
// The header is padded with spaces so the data region starts on a 64-byte boundary; tensors
// follow one another without gaps, which is what the reference reader requires.
//
// Owns: the output file while it is open. Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kimi/dtype.h"
#include "kimi/status.h"

namespace kimi {

class SafetensorsWriter {
 public:
  SafetensorsWriter() = default;
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  // Preconditions: Open() not yet called; the name is new.
  Status Declare(const std::string& name, DType dtype, const std::vector<int64_t>& shape);
  void SetMetadata(const std::string& key, const std::string& value) { metadata_[key] = value; }

  // Creates `path` and writes the header.
  Status Open(const std::string& path);
  // Appends bytes of the current tensor; a tensor may arrive in several pieces. The pieces of
  // each tensor must add up to exactly its declared size before the next one starts.
  Status Append(const void* data, uint64_t bytes);
  // As Append, but leaves the bytes unwritten: a hole in the file that reads as zeros and takes
  // no disk space (for models whose weights are generated elsewhere, e.g. on a GPU).
  Status Skip(uint64_t bytes);
  // Checks that every declared byte was written, then closes the file.
  Status Finish();

  uint64_t data_bytes() const { return data_bytes_; }

 private:
  struct Pending {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t bytes;
  };
  Status Advance(uint64_t bytes);  // checks and counts the next bytes of the current tensor

  std::vector<Pending> tensors_;
  std::map<std::string, std::string> metadata_;
  uint64_t data_bytes_ = 0;
  std::string path_;
  std::FILE* file_ = nullptr;
  size_t current_ = 0;          // tensor being written
  uint64_t current_written_ = 0;
};

}  // namespace kimi
