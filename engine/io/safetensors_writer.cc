#include "io/safetensors_writer.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "kimi/safetensors.h"

namespace kimi {

SafetensorsWriter::~SafetensorsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status SafetensorsWriter::Declare(const std::string& name, DType dtype, const std::vector<int64_t>& shape) {
  if (file_ != nullptr) return Status::FailedPrecondition(name + ": declared after Open()");
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status::InvalidArgument(name + ": negative dimension");
    numel *= static_cast<uint64_t>(d);
  }
  for (const auto& t : tensors_) {
    if (t.name == name) return Status::AlreadyExists(name + ": declared twice");
  }
  uint64_t bytes = numel * DTypeSize(dtype);
  tensors_.push_back({name, dtype, shape, bytes});
  data_bytes_ += bytes;
  return Status::OK();
}

Status SafetensorsWriter::Open(const std::string& path) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata_) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    header[t.name] = {{"dtype", std::string(SafetensorsDTypeName(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 64 != 0) text.push_back(' ');

  path_ = path;
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return Status::IOError(path + ": cannot create: " + std::strerror(errno));
  uint8_t length[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));
  if (std::fwrite(length, 1, 8, file_) != 8 || std::fwrite(text.data(), 1, n, file_) != n) {
    return Status::IOError(path + ": write failed: " + std::strerror(errno));
  }
  current_ = 0;
  current_written_ = 0;
  return Status::OK();
}

Status SafetensorsWriter::Advance(uint64_t bytes) {
  if (file_ == nullptr) return Status::FailedPrecondition(path_ + ": Append() before Open()");
  while (current_ < tensors_.size() && current_written_ == tensors_[current_].bytes) {
    ++current_;
    current_written_ = 0;
  }
  if (current_ >= tensors_.size()) {
    return Status::FailedPrecondition(path_ + ": more bytes than the declared tensors hold");
  }
  const Pending& t = tensors_[current_];
  if (current_written_ + bytes > t.bytes) {
    return Status::InvalidArgument(path_ + ": tensor '" + t.name + "': " +
                                   std::to_string(current_written_ + bytes) +
                                   " bytes written but " + std::to_string(t.bytes) + " declared");
  }
  current_written_ += bytes;
  return Status::OK();
}

Status SafetensorsWriter::Append(const void* data, uint64_t bytes) {
  KIMI_RETURN_IF_ERROR(Advance(bytes));
  if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) {
    return Status::IOError(path_ + ": write failed: " + std::strerror(errno));
  }
  return Status::OK();
}

Status SafetensorsWriter::Skip(uint64_t bytes) {
  KIMI_RETURN_IF_ERROR(Advance(bytes));
  if (bytes > 0 && fseeko(file_, static_cast<off_t>(bytes), SEEK_CUR) != 0) {
    return Status::IOError(path_ + ": seek failed: " + std::strerror(errno));
  }
  return Status::OK();
}

Status SafetensorsWriter::Finish() {
  if (file_ == nullptr) return Status::FailedPrecondition(path_ + ": Finish() before Open()");
  while (current_ < tensors_.size() && current_written_ == tensors_[current_].bytes) {
    ++current_;
    current_written_ = 0;
  }
  if (current_ != tensors_.size()) {
    return Status::FailedPrecondition(path_ + ": tensor '" + tensors_[current_].name +
                                      "' is incomplete");
  }
  // A skipped tail is past the file's end until the length is set.
  const off_t end = ftello(file_);
  if (std::fflush(file_) != 0 || end < 0 || ftruncate(fileno(file_), end) != 0) {
    std::fclose(file_);
    file_ = nullptr;
    return Status::IOError(path_ + ": cannot set the file's length: " + std::strerror(errno));
  }
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) return Status::IOError(path_ + ": close failed: " + std::strerror(errno));
  return Status::OK();
}

}  // namespace kimi
