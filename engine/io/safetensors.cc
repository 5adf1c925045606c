#include "kimi/safetensors.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kimi/untrusted_json.h"
#include "io/mapped_file.h"

namespace kimi {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  uint64_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "F32", 4}, {DType::kBF16, "BF16", 2}, {DType::kF16, "F16", 2},
    {DType::kU8, "U8", 1},   {DType::kI8, "I8", 1},     {DType::kI32, "I32", 4},
    {DType::kI64, "I64", 8}, {DType::kF64, "F64", 8},   {DType::kBool, "BOOL", 1},
};

Status FileError(std::string_view label, const std::string& what) {
  return Status::Corruption(std::string(label) + ": " + what);
}

Status TensorError(std::string_view label, std::string_view tensor, const std::string& what) {
  return Status::Corruption(std::string(label) + ": tensor '" + std::string(tensor) + "': " + what);
}

// A JSON number that is a non-negative integer, as uint64.
bool AsUnsigned(const nlohmann::json& v, uint64_t* out) {
  if (!v.is_number_unsigned()) return false;  // negative, fractional and non-numbers fail
  *out = v.get<uint64_t>();
  return true;
}

Result<SafetensorsHeader::Entry> ParseEntry(std::string_view label, const std::string& name,
                                            const nlohmann::json& info, uint64_t data_size) {
  SafetensorsHeader::Entry entry;
  entry.name = name;
  if (!info.is_object()) return TensorError(label, name, "header entry is not an object");

  auto dtype_it = info.find("dtype");
  if (dtype_it == info.end() || !dtype_it->is_string()) {
    return TensorError(label, name, "missing or non-string \"dtype\"");
  }
  const std::string& dtype_name = dtype_it->get_ref<const std::string&>();
  if (!ParseSafetensorsDType(dtype_name, &entry.dtype)) {
    return TensorError(label, name, "unknown dtype \"" + dtype_name + "\"");
  }

  auto shape_it = info.find("shape");
  if (shape_it == info.end() || !shape_it->is_array()) {
    return TensorError(label, name, "missing or non-array \"shape\"");
  }
  uint64_t numel = 1;
  for (const auto& dim : *shape_it) {
    uint64_t d;
    if (!AsUnsigned(dim, &d) || d > static_cast<uint64_t>(INT64_MAX)) {
      return TensorError(label, name, "shape has a dimension that is not a non-negative integer: " +
                                          shape_it->dump());
    }
    if (__builtin_mul_overflow(numel, d, &numel)) {
      return TensorError(label, name, "shape " + shape_it->dump() + " overflows");
    }
    entry.shape.push_back(static_cast<int64_t>(d));
  }

  auto offsets_it = info.find("data_offsets");
  uint64_t begin = 0, end = 0;
  if (offsets_it == info.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !AsUnsigned((*offsets_it)[0], &begin) || !AsUnsigned((*offsets_it)[1], &end)) {
    return TensorError(label, name, "\"data_offsets\" must be two non-negative integers");
  }
  if (begin > end) {
    return TensorError(label, name, "data_offsets [" + std::to_string(begin) + ", " +
                                        std::to_string(end) + "] run backwards");
  }
  if (end > data_size) {
    return TensorError(label, name, "data_offsets end " + std::to_string(end) +
                                        " lies past the data region of " + std::to_string(data_size) +
                                        " bytes");
  }
  uint64_t expected;
  if (__builtin_mul_overflow(numel, DTypeSize(entry.dtype), &expected) || expected != end - begin) {
    return TensorError(label, name, dtype_name + shape_it->dump() + " needs " +
                                        std::to_string(numel) + " x " +
                                        std::to_string(DTypeSize(entry.dtype)) +
                                        " bytes but data_offsets span " + std::to_string(end - begin));
  }
  entry.offset = begin;  // made absolute by the caller
  entry.bytes = end - begin;
  return entry;
}

Status ParseMetadata(std::string_view label, const nlohmann::json& meta,
                     std::map<std::string, std::string>* out) {
  if (!meta.is_object()) return FileError(label, "\"__metadata__\" is not an object");
  for (auto it = meta.begin(); it != meta.end(); ++it) {
    if (!it.value().is_string()) {
      return FileError(label, "\"__metadata__\" value for '" + it.key() + "' is not a string");
    }
    (*out)[it.key()] = it.value().get<std::string>();
  }
  return Status::OK();
}

// The tensors must tile [0, data_size) in offset order, as the reference reader demands.
Status CheckTiling(std::string_view label, const std::vector<SafetensorsHeader::Entry>& tensors,
                   uint64_t data_size) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tensors[a].offset != tensors[b].offset) return tensors[a].offset < tensors[b].offset;
    return tensors[a].bytes < tensors[b].bytes;
  });
  uint64_t cursor = 0;
  const SafetensorsHeader::Entry* previous = nullptr;
  for (size_t i : order) {
    const auto& t = tensors[i];
    if (t.offset < cursor) {
      return TensorError(label, t.name, "bytes [" + std::to_string(t.offset) + ", " +
                                            std::to_string(t.offset + t.bytes) + ") overlap tensor '" +
                                            previous->name + "' which ends at " + std::to_string(cursor));
    }
    if (t.offset > cursor) {
      return TensorError(label, t.name, "starts at " + std::to_string(t.offset) +
                                            " leaving a gap of " + std::to_string(t.offset - cursor) +
                                            " unowned bytes before it");
    }
    cursor = t.offset + t.bytes;
    previous = &t;
  }
  if (cursor != data_size) {
    return FileError(label, "data region holds " + std::to_string(data_size) +
                                " bytes but the tensors cover only " + std::to_string(cursor));
  }
  return Status::OK();
}

}  // namespace

std::string_view SafetensorsDTypeName(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

bool ParseSafetensorsDType(std::string_view name, DType* out) {
  for (const auto& d : kDTypes) {
    if (d.name == name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

uint64_t DTypeSize(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 1;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorView::Describe() const {
  std::string out(SafetensorsDTypeName(dtype));
  out += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += "]";
  return out;
}

Result<SafetensorsHeader> ParseSafetensors(const uint8_t* bytes, uint64_t size, std::string_view label) {
  if (size < 8) {
    return FileError(label, "file of " + std::to_string(size) +
                                " bytes is shorter than the 8-byte header length");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > size - 8) {
    return FileError(label, "header length " + std::to_string(header_len) + " runs past the end of the " +
                                std::to_string(size) + "-byte file");
  }
  if (header_len > kSafetensorsMaxHeaderBytes) {
    return FileError(label, "header length " + std::to_string(header_len) + " exceeds the " +
                                std::to_string(kSafetensorsMaxHeaderBytes) + "-byte limit");
  }
  if (header_len < 2) return FileError(label, "header of " + std::to_string(header_len) + " bytes is too short");

  std::string_view text(reinterpret_cast<const char*>(bytes + 8), header_len);
  auto parsed = ParseUntrustedJson(text, std::string(label) + ": header", kMaxFileJsonNesting);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& header = *parsed;
  if (!header.is_object()) return FileError(label, "header JSON is not an object");

  SafetensorsHeader out;
  out.data_start = 8 + header_len;
  uint64_t data_size = size - out.data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      KIMI_RETURN_IF_ERROR(ParseMetadata(label, it.value(), &out.metadata));
      continue;
    }
    if (it.key().empty()) return FileError(label, "a tensor has an empty name");
    KIMI_ASSIGN_OR_RETURN(auto entry, ParseEntry(label, it.key(), it.value(), data_size));
    out.tensors.push_back(std::move(entry));
  }
  KIMI_RETURN_IF_ERROR(CheckTiling(label, out.tensors, data_size));
  for (auto& t : out.tensors) t.offset += out.data_start;
  return out;
}

SafetensorsFile::~SafetensorsFile() = default;

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(auto mapping, MappedFile::Open(path));
  KIMI_ASSIGN_OR_RETURN(auto header, ParseSafetensors(mapping->data(), mapping->size(), path));
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->metadata_ = std::move(header.metadata);
  file->tensors_.reserve(header.tensors.size());
  for (auto& e : header.tensors) {
    TensorView view;
    view.name = std::move(e.name);
    view.dtype = e.dtype;
    view.shape = std::move(e.shape);
    view.data = mapping->data() + e.offset;
    view.bytes = e.bytes;
    file->position_.emplace(view.name, file->tensors_.size());
    file->tensors_.push_back(std::move(view));
  }
  file->mapping_ = std::move(mapping);
  return file;
}

const uint8_t* SafetensorsFile::mapped_data() const { return mapping_->data(); }
uint64_t SafetensorsFile::mapped_size() const { return mapping_->size(); }

const TensorView* SafetensorsFile::Find(std::string_view name) const {
  auto it = position_.find(name);
  return it == position_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace kimi
