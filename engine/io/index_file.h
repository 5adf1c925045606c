// Reads model.safetensors.index.json without building a JSON tree (the full K3 index lists about
// half a million tensors): weight_map (tensor name -> shard file) and, for shape-only
// directories, tensor_specs (tensor name -> {"dtype", "shape"}). Every shard name must be a
// plain file name inside the directory ("x.safetensors", no '/', not "..").
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/dtype.h"
#include "kimi/status.h"

namespace kimi {

struct IndexFile {
  struct Spec {
    DType dtype = DType::kU8;
    std::vector<int64_t> shape;
  };
  std::map<std::string, std::string, std::less<>> weight_map;
  std::map<std::string, Spec> tensor_specs;
  bool has_tensor_specs = false;
};

// `label` (the path) prefixes every error.
Result<IndexFile> ParseIndexFile(std::string_view text, std::string_view label);

}  // namespace kimi
