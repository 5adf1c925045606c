#include "kimi/model_dir.h"

#include <filesystem>
#include <set>

#include "io/index_file.h"
#include "kimi/k3_tensors.h"
#include "kimi/regular_file.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";
constexpr uint64_t kMaxIndexBytes = 1ull << 30;

std::string ShapeText(DType dtype, const std::vector<int64_t>& shape) {
  TensorView v;
  v.dtype = dtype;
  v.shape = shape;
  return v.Describe();
}

}  // namespace

ModelDir::~ModelDir() = default;

Result<std::unique_ptr<ModelDir>> ModelDir::Open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  std::unique_ptr<ModelDir> m(new ModelDir());
  m->dir_ = dir;
  KIMI_ASSIGN_OR_RETURN(m->config_, LoadK3Config((fs::path(dir) / "config.json").string()));

  fs::path index = fs::path(dir) / kIndexName;
  if (fs::exists(index, ec)) {
    m->index_path_ = index.string();
    KIMI_ASSIGN_OR_RETURN(std::string text,
                          ReadRegularFile(index.string(), kMaxIndexBytes, FinalLink::kFollow));
    KIMI_ASSIGN_OR_RETURN(IndexFile parsed, ParseIndexFile(text, m->index_path_));
    m->location_ = std::move(parsed.weight_map);
    for (auto& [name, spec] : parsed.tensor_specs) m->specs_[name] = {spec.dtype, std::move(spec.shape)};
    if (parsed.has_tensor_specs) {
      bool any_shard = false;
      for (const auto& file : m->shard_files()) any_shard |= fs::exists(fs::path(dir) / file, ec);
      m->shape_only_ = !any_shard;
    }
  } else if (fs::exists(fs::path(dir) / kSingleName, ec)) {
    std::string file = kSingleName;
    KIMI_ASSIGN_OR_RETURN(SafetensorsFile * shard, m->Shard(file));
    for (const auto& t : shard->tensors()) m->location_[t.name] = file;
  } else {
    return Status::NotFound(dir + ": neither " + kIndexName + " nor " + kSingleName + " is present");
  }
  for (const auto& [name, file] : m->location_) {
    if (name.rfind(kPublishedPrefix, 0) == 0) {
      m->prefix_ = std::string(kPublishedPrefix);
      break;
    }
  }
  return m;
}

std::vector<std::string> ModelDir::shard_files() const {
  std::set<std::string> files;
  for (const auto& [name, file] : location_) files.insert(file);
  return {files.begin(), files.end()};
}

std::vector<MappedWeightFile> ModelDir::MappedShards() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MappedWeightFile> out;
  for (const auto& [file, shard] : shards_) out.push_back({file, shard->mapped_data(), shard->mapped_size()});
  return out;
}

Result<SafetensorsFile*> ModelDir::Shard(const std::string& file) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shards_.find(file);
  if (it != shards_.end()) return it->second.get();
  KIMI_ASSIGN_OR_RETURN(auto opened, SafetensorsFile::Open((fs::path(dir_) / file).string()));
  SafetensorsFile* raw = opened.get();
  shards_.emplace(file, std::move(opened));
  return raw;
}

// Early exports spell the attention-residual weights `self_attention_res.proj_weight`; the
// published checkpoint (and the tensor table) says `self_attention_res_proj.weight`.
static std::string LegacyResidualSpelling(std::string_view name) {
  for (std::string_view leaf : {"_res_proj.weight", "_res_norm.weight"}) {
    if (name.size() > leaf.size() && name.substr(name.size() - leaf.size()) == leaf) {
      std::string out(name.substr(0, name.size() - leaf.size()));
      out += leaf == "_res_proj.weight" ? "_res.proj_weight" : "_res.norm_weight";
      return out;
    }
  }
  return "";
}

Result<const TensorView*> ModelDir::Tensor(std::string_view name) {
  auto it = location_.find(prefix_ + std::string(name));
  if (it == location_.end()) it = location_.find(name);
  if (it == location_.end()) {
    std::string legacy = LegacyResidualSpelling(name);
    if (!legacy.empty()) {
      it = location_.find(prefix_ + legacy);
      if (it == location_.end()) it = location_.find(legacy);
    }
  }
  if (it == location_.end()) {
    return Status::NotFound(dir_ + ": no tensor '" + std::string(name) + "' in " +
                            (index_path_.empty() ? kSingleName : kIndexName));
  }
  if (shape_only_) {
    return Status::FailedPrecondition(dir_ + ": tensor '" + it->first +
                                      "': shape-only directory (no shard data)");
  }
  KIMI_ASSIGN_OR_RETURN(SafetensorsFile * shard, Shard(it->second));
  const TensorView* view = shard->Find(it->first);
  if (view == nullptr) {
    return Status::Corruption(shard->path() + ": tensor '" + it->first + "' listed in " + kIndexName +
                              " is missing from the shard");
  }
  return view;
}

Status ModelDir::ValidateIndex() {
  if (shape_only_) return Status::OK();
  for (const auto& [name, file] : location_) {
    KIMI_ASSIGN_OR_RETURN(SafetensorsFile * shard, Shard(file));
    if (shard->Find(name) == nullptr) {
      return Status::Corruption(shard->path() + ": tensor '" + name + "' listed in " + kIndexName +
                                " is missing from the shard");
    }
  }
  return Status::OK();
}

Result<std::pair<DType, std::vector<int64_t>>> ModelDir::StoredShape(const std::string& stored) {
  if (shape_only_) {
    auto it = specs_.find(stored);
    if (it == specs_.end()) {
      return Status::Corruption(index_path_ + ": tensor '" + stored + "' has no tensor_specs entry");
    }
    return std::pair{it->second.dtype, it->second.shape};
  }
  KIMI_ASSIGN_OR_RETURN(const TensorView* view, Tensor(stored.substr(prefix_.size())));
  return std::pair{view->dtype, view->shape};
}

Status ModelDir::ValidateLayout() {
  KIMI_RETURN_IF_ERROR(ValidateIndex());
  Status status;
  ForEachK3Tensor(config_, [&](const TensorSpec& spec) {
    if (!status.ok()) return;
    std::string stored = prefix_ + spec.name;
    if (location_.find(stored) == location_.end()) {
      std::string legacy = LegacyResidualSpelling(spec.name);
      if (!legacy.empty() && location_.count(prefix_ + legacy)) stored = prefix_ + legacy;
    }
    if (location_.find(stored) == location_.end()) {
      status = Status::NotFound(dir_ + ": tensor '" + stored + "' (" + ShapeText(spec.dtype, spec.shape) +
                                ") required by config.json is not in the checkpoint");
      return;
    }
    auto got = StoredShape(stored);
    if (!got.ok()) {
      status = got.status();
      return;
    }
    auto [dtype, shape] = *got;
    bool same = dtype == spec.dtype && shape == spec.shape;
    if (!same && dtype == spec.dtype) {
      // Per-head vectors whose exporters disagree on the shape: A_log needs one live entry per
      // head (the published file pads 96 to 128), dt_bias may come as [heads, head_dim].
      int64_t n = 1, want = 1;
      for (int64_t d : shape) n *= d;
      for (int64_t d : spec.shape) want *= d;
      if (spec.name.ends_with(".A_log")) same = n >= config_.linear_attn.num_heads;
      if (spec.name.ends_with(".dt_bias")) same = n == want;
    }
    if (!same) {
      status = Status::Corruption(dir_ + ": tensor '" + stored + "' is " + ShapeText(dtype, shape) +
                                  " but config.json implies " + ShapeText(spec.dtype, spec.shape));
    }
  });
  return status;
}

}  // namespace kimi
