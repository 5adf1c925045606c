// A Kimi K3 model directory: config.json plus either model.safetensors.index.json (weight_map:
// tensor name -> shard file) with its shards, or a single model.safetensors.
//
// Open() reads and validates the config and the index (shard names must be plain file names in
// the directory). Shards are mapped lazily, each once, on the first lookup of a tensor it holds.
// Lookups take the names of the tensor table (k3_tensors.h, without the published
// `language_model.` prefix); whether the directory stores them with the prefix is detected.
// A directory whose index carries "tensor_specs" and whose shards are absent is shape-only (what
// `synth --preset k3-full-shape` writes): its layout can be checked, its tensors not read.
//
// Owns: the config, the index and the mapped shards; TensorViews live as long as the ModelDir.
// Thread safety: every method may be called from any thread; the shard table is guarded by a
// mutex and a mapped shard is never unmapped before destruction.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/config.h"
#include "kimi/safetensors.h"
#include "kimi/status.h"

namespace kimi {

class ModelDir {
 public:
  static Result<std::unique_ptr<ModelDir>> Open(const std::string& dir);
  ~ModelDir();
  ModelDir(const ModelDir&) = delete;
  ModelDir& operator=(const ModelDir&) = delete;

  const std::string& path() const { return dir_; }
  const K3Config& config() const { return config_; }
  bool shape_only() const { return shape_only_; }
  // "language_model." or "" — how the directory spells the tensor names.
  const std::string& name_prefix() const { return prefix_; }
  // Number of tensors the index (or the single file) lists.
  size_t tensor_count() const { return location_.size(); }
  std::vector<std::string> shard_files() const;
  // The shards mapped so far (after ValidateIndex(): every one), by file name.
  std::vector<MappedWeightFile> MappedShards() const;

  // The tensor named `name` (without prefix). NotFound when the index does not list it,
  // Corruption when its shard does not hold it or is damaged, FailedPrecondition when shape-only.
  Result<const TensorView*> Tensor(std::string_view name);

  // Maps every shard and checks that each tensor the index lists is in the shard it names.
  Status ValidateIndex();
  // Checks that every tensor of the K3 table for this config is present with its dtype and shape
  // (from the shards, or from tensor_specs when shape-only). Implies ValidateIndex().
  Status ValidateLayout();

 private:
  struct StoredSpec {
    DType dtype;
    std::vector<int64_t> shape;
  };
  ModelDir() = default;
  Result<SafetensorsFile*> Shard(const std::string& file);
  Result<std::pair<DType, std::vector<int64_t>>> StoredShape(const std::string& stored_name);

  std::string dir_;
  K3Config config_;
  bool shape_only_ = false;
  std::string prefix_;
  std::string index_path_;
  std::map<std::string, std::string, std::less<>> location_;  // stored name -> shard file
  std::map<std::string, StoredSpec> specs_;                   // shape-only directories

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<SafetensorsFile>> shards_;  // GUARDED_BY(mu_)
};

}  // namespace kimi
