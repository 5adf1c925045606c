// Safetensors files, read in place through a read-only memory mapping (no copy of the weights).
//
// Format: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data region that
// follows the header) plus an optional "__metadata__" object of strings, then the data region.
// Everything in the header is validated before a single view is handed out: the header lies
// inside the file, the JSON is well formed and not nested absurdly deep, every dtype is known,
// every shape is non-negative with product·itemsize == end−begin, every range lies inside the
// data region, and the ranges tile it without overlaps or gaps (as the reference implementation
// requires). A violation is a Corruption status whose message names the file and, where there
// is one, the tensor. Hostile input never crashes the parser.
//
// Owns: the mapping; TensorViews point into it and live as long as the SafetensorsFile.
// Thread safety: a SafetensorsFile is immutable after Open(); any thread may read it.
// Known limit: a file truncated by someone else after it was mapped raises SIGBUS on access.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/dtype.h"
#include "kimi/status.h"

namespace kimi {

// The safetensors spelling of a dtype ("BF16", "F32", "U8", ...), and its element size in bytes.
std::string_view SafetensorsDTypeName(DType dtype);
bool ParseSafetensorsDType(std::string_view name, DType* out);
uint64_t DTypeSize(DType dtype);

// One tensor inside a mapped file. `data` is only byte-aligned in general: readers that need
// wider alignment copy, or check reinterpret-safety themselves.
struct TensorView {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  uint64_t bytes = 0;

  int64_t numel() const;
  // "BF16[128, 64]"
  std::string Describe() const;
};

// The validated header of a safetensors image, with offsets relative to the image start.
struct SafetensorsHeader {
  struct Entry {
    std::string name;
    DType dtype = DType::kU8;
    std::vector<int64_t> shape;
    uint64_t offset = 0;  // from the start of the image
    uint64_t bytes = 0;
  };
  std::vector<Entry> tensors;  // in header order
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

// Headers above this size are refused (the reference implementation's limit).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100ull << 20;

// Parses and validates a complete safetensors image of `size` bytes. `label` (a path) is put in
// every error message. Never reads outside [bytes, bytes+size).
Result<SafetensorsHeader> ParseSafetensors(const uint8_t* bytes, uint64_t size, std::string_view label);

// A weight file read in place through a read-only mapping: the bytes the engine computes with.
// Valid while whoever handed it out (ModelDir, Model, ChatService) lives.
struct MappedWeightFile {
  std::string file;  // name relative to the model directory
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

class MappedFile;

class SafetensorsFile {
 public:
  // Maps and validates the file at `path`.
  static Result<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr when the file has no tensor of that name.
  const TensorView* Find(std::string_view name) const;
  // The whole mapped file (header and data): the bytes every TensorView points into.
  const uint8_t* mapped_data() const;
  uint64_t mapped_size() const;

 private:
  SafetensorsFile() = default;

  std::string path_;
  std::unique_ptr<MappedFile> mapping_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, size_t, std::less<>> position_;
};

}  // namespace kimi
