#include "io/k3_quantize.h"

#include <stdio.h>  // renameat2, RENAME_NOREPLACE

#include <fcntl.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "core/whole_file.h"
#include "io/quantization_json.h"
#include "io/safetensors_writer.h"
#include "kimi/dtype.h"
#include "kimi/k3_tensors.h"
#include "kimi/model_dir.h"
#include "kimi/safetensors.h"
#include "kimi/untrusted_json.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kConfigName = "config.json";
constexpr const char* kSignatureName = "model.sig";

// The dense projections, by module name (compressed-tensors matches "re:" targets from the start).
const std::vector<std::string>& DenseTargets() {
  static const std::vector<std::string> targets = {
      "re:.*self_attn\\.(q|k|v|o|g|b|f_a|f_b|g_a|g_b|q_a|q_b)_proj$",
      "re:.*self_attn\\.kv_a_proj_with_mqa$",
      "re:.*mlp\\.(gate|up|down)_proj$",
      "re:.*shared_experts\\.(gate|up|down)_proj$",
      "re:.*block_sparse_moe\\.routed_expert_(down|up)_proj$",
  };
  return targets;
}

// The Linear modules that stay BF16: lm_head, the router, kv_b_proj, the residual projections.
const std::vector<std::string>& KeptLinear() {
  static const std::vector<std::string> ignore = {"lm_head", "re:.*block_sparse_moe\\.gate$", "re:.*kv_b_proj$",
                                                  "re:.*_res_proj$"};
  return ignore;
}

QuantizationGroup Mxfp4Group(std::string name, std::vector<std::string> targets) {
  QuantizationGroup g;
  g.name = std::move(name);
  g.format = std::string(kMxfp4PackFormat);
  g.targets = std::move(targets);
  return g;
}

}  // namespace

QuantizationConfig QuantizedDenseConfig(const QuantizationConfig& old, QuantScheme scheme) {
  QuantizationConfig q;
  q.present = true;
  q.quant_method = "compressed-tensors";
  q.ignore = KeptLinear();
  if (old.HasMxfp4()) q.groups.push_back(Mxfp4Group("group_0", {std::string(kRoutedExpertsTarget)}));
  if (scheme == QuantScheme::kMxfp4Dense) {
    q.groups.push_back(Mxfp4Group("group_1", DenseTargets()));
  } else {
    QuantizationGroup g;
    g.name = "group_1";
    g.format = std::string(kIntPackFormat);
    g.targets = DenseTargets();
    g.num_bits = 8;
    g.type = "int";
    g.strategy = "channel";
    g.group_size = 0;
    q.groups.push_back(g);
  }
  q.format = q.groups.front().format;
  for (const QuantizationGroup& g : q.groups) {
    if (g.format != q.format) q.format = std::string(kMixedPrecisionFormat);
  }
  return q;
}

namespace {

// A dense module to quantise: its BF16 shape and the tensors that replace its `weight`.
struct Target {
  int64_t rows = 0, cols = 0;
  MatrixFormat format = MatrixFormat::kBf16;
  std::vector<TensorSpec> pieces;  // in table order: weight_packed, weight_scale[, weight_shape]
};

// The modules whose `weight` the new config replaces, keyed by module name (no prefix).
Result<std::map<std::string, Target>> PlanTargets(const K3Config& before, const K3Config& after) {
  std::map<std::string, TensorSpec> old_specs;
  Status already;
  ForEachK3Tensor(before, [&](const TensorSpec& s) {
    if (s.group != TensorGroup::kRoutedExperts && s.name.ends_with(".weight_packed") && already.ok()) {
      already = Status::InvalidArgument("its dense projections are already quantised (" + s.name + ")");
    }
    old_specs[s.name] = s;
  });
  KIMI_RETURN_IF_ERROR(already);
  std::map<std::string, Target> targets;
  const QuantizationMatcher matcher(after.quantization);
  ForEachK3Tensor(after, [&](const TensorSpec& s) {
    if (s.group == TensorGroup::kRoutedExperts || old_specs.count(s.name) != 0) return;
    const std::string module = s.name.substr(0, s.name.rfind('.'));
    Target& t = targets[module];
    const TensorSpec& weight = old_specs.at(module + ".weight");
    t.rows = weight.shape[0];
    t.cols = weight.shape[1];
    t.format = matcher.FormatOf(module);
    t.pieces.push_back(s);
  });
  return targets;
}

// Row r of a BF16 matrix as floats.
void RowToFloat(const uint8_t* data, int64_t cols, int64_t r, float* out) {
  for (int64_t k = 0; k < cols; ++k) {
    uint16_t b;
    std::memcpy(&b, data + 2 * (r * cols + k), 2);
    out[k] = Bf16ToF32(b);
  }
}

// The bytes of each piece of `t`, from the BF16 matrix at `data`.
std::vector<std::vector<uint8_t>> QuantizeMatrix(const Target& t, const uint8_t* data) {
  std::vector<float> row(t.cols);
  if (t.format == MatrixFormat::kMxfp4) {
    std::vector<uint8_t> packed(t.rows * t.cols / 2), scales(t.rows * t.cols / kMxfp4BlockSize);
    for (int64_t r = 0; r < t.rows; ++r) {
      RowToFloat(data, t.cols, r, row.data());
      QuantizeMxfp4Row(row.data(), t.cols, packed.data() + r * (t.cols / 2), scales.data() + r * (t.cols / kMxfp4BlockSize));
    }
    return {std::move(packed), std::move(scales)};
  }
  std::vector<uint8_t> q(t.rows * t.cols), scale_bytes(t.rows * sizeof(float)), shape(2 * sizeof(int32_t));
  for (int64_t r = 0; r < t.rows; ++r) {
    RowToFloat(data, t.cols, r, row.data());
    float amax = 0.0f;
    for (float v : row) amax = std::fmax(amax, std::fabs(v));
    // An all-zero row keeps scale 1 so that it dequantises to zeros without dividing by zero.
    const float scale = amax > 0.0f ? amax / 127.0f : 1.0f;
    for (int64_t k = 0; k < t.cols; ++k) {
      const float v = std::nearbyint(row[k] / scale);  // round half to even
      q[r * t.cols + k] = static_cast<uint8_t>(static_cast<int>(std::fmax(-127.0f, std::fmin(127.0f, v))) + 128);
    }
    std::memcpy(scale_bytes.data() + r * sizeof(float), &scale, sizeof(float));
  }
  const int32_t dims[2] = {static_cast<int32_t>(t.rows), static_cast<int32_t>(t.cols)};
  std::memcpy(shape.data(), dims, sizeof dims);
  return {std::move(q), std::move(scale_bytes), std::move(shape)};
}

uint64_t SpecBytes(const std::vector<TensorSpec>& pieces) {
  uint64_t bytes = 0;
  for (const TensorSpec& p : pieces) bytes += p.bytes();
  return bytes;
}

// config.json with only its quantization_config replaced, wherever it was (text_config or the
// top level; text_config when it had none), so every other key stays as published.
Result<std::string> RewriteConfig(const fs::path& path, const QuantizationConfig& q) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path.string()));
  Result<nlohmann::ordered_json> parsed = ParseUntrustedJson<nlohmann::ordered_json>(text, path.string(), kMaxFileJsonNesting);
  if (!parsed.ok() || !parsed->is_object()) return Status::InvalidArgument(path.string() + ": not a JSON object");
  nlohmann::ordered_json root = std::move(*parsed);
  nlohmann::ordered_json* holder = &root;
  auto text_config = root.find("text_config");
  if (text_config != root.end() && text_config->is_object() && !root.contains("quantization_config")) {
    holder = &*text_config;
  }
  (*holder)["quantization_config"] = QuantizationToJson(q);
  return root.dump(2) + "\n";
}

// Writes one shard: every tensor of `in` in its order, the targets' weights replaced by their pieces.
Status WriteShard(const SafetensorsFile& in, const std::string& prefix, const std::map<std::string, Target>& targets,
                  const fs::path& out, nlohmann::ordered_json& weight_map, const std::string& file, uint64_t* total,
                  QuantizeSummary* summary) {
  SafetensorsWriter writer;
  for (const auto& [key, value] : in.metadata()) writer.SetMetadata(key, value);
  auto target_of = [&](const TensorView& t) -> const Target* {
    if (t.name.rfind(prefix, 0) != 0 || !t.name.ends_with(".weight")) return nullptr;
    const std::string bare = t.name.substr(prefix.size());
    auto it = targets.find(bare.substr(0, bare.size() - std::string_view(".weight").size()));
    return it == targets.end() ? nullptr : &it->second;
  };
  for (const TensorView& t : in.tensors()) {
    if (const Target* target = target_of(t)) {
      for (const TensorSpec& p : target->pieces) {
        KIMI_RETURN_IF_ERROR(writer.Declare(prefix + p.name, p.dtype, p.shape));
        weight_map[prefix + p.name] = file;
      }
    } else {
      KIMI_RETURN_IF_ERROR(writer.Declare(t.name, t.dtype, t.shape));
      weight_map[t.name] = file;
    }
  }
  KIMI_RETURN_IF_ERROR(writer.Open(out.string()));
  for (const TensorView& t : in.tensors()) {
    const Target* target = target_of(t);
    if (target == nullptr) {
      KIMI_RETURN_IF_ERROR(writer.Append(t.data, t.bytes));
      *total += t.bytes;
      continue;
    }
    if (t.dtype != DType::kBF16 || t.shape != std::vector<int64_t>{target->rows, target->cols}) {
      return Status::InvalidArgument(t.name + " is " + t.Describe() + ", expected a BF16 matrix");
    }
    for (const std::vector<uint8_t>& piece : QuantizeMatrix(*target, static_cast<const uint8_t*>(t.data))) {
      KIMI_RETURN_IF_ERROR(writer.Append(piece.data(), piece.size()));
      *total += piece.size();
    }
    ++summary->matrices;
    summary->bytes_before += t.bytes;
    summary->bytes_after += SpecBytes(target->pieces);
  }
  return writer.Finish();
}

// Everything but the weights, the index, the config and the signature, copied as it is.
Status CopyOtherFiles(const fs::path& in, const fs::path& out, const std::set<std::string>& rewritten) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(in, ec)) {
    const std::string name = e.path().filename().string();
    if (rewritten.count(name) != 0 || name == kSignatureName) continue;
    fs::copy(e.path(), out / name, fs::copy_options::recursive, ec);
    if (ec) return Status::IOError(e.path().string() + ": cannot copy: " + ec.message());
  }
  if (ec) return Status::IOError(in.string() + ": cannot list: " + ec.message());
  return Status::OK();
}

Result<QuantizeSummary> WriteQuantized(ModelDir& dir, const fs::path& in, const fs::path& tmp, QuantScheme scheme) {
  K3Config after = dir.config();
  after.quantization = QuantizedDenseConfig(dir.config().quantization, scheme);
  KIMI_RETURN_IF_ERROR(ValidateK3Config(after, "quantized config: "));
  KIMI_ASSIGN_OR_RETURN(auto targets, PlanTargets(dir.config(), after));

  QuantizeSummary summary;
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  uint64_t total = 0;
  std::set<std::string> rewritten = {kConfigName, kIndexName};
  for (const std::string& file : dir.shard_files()) {
    KIMI_ASSIGN_OR_RETURN(auto shard, SafetensorsFile::Open((in / file).string()));
    KIMI_RETURN_IF_ERROR(WriteShard(*shard, dir.name_prefix(), targets, tmp / file, weight_map, file, &total, &summary));
    rewritten.insert(file);
  }
  if (summary.matrices != static_cast<int64_t>(targets.size())) {
    return Status::Internal("quantised " + std::to_string(summary.matrices) + " of " + std::to_string(targets.size()) +
                            " dense matrices");
  }
  if (fs::exists(in / kIndexName)) {
    nlohmann::ordered_json index;
    index["metadata"] = {{"total_size", total}};
    index["weight_map"] = std::move(weight_map);
    KIMI_RETURN_IF_ERROR(WriteWholeFile((tmp / kIndexName).string(), index.dump(2) + "\n"));
  }
  KIMI_ASSIGN_OR_RETURN(std::string config, RewriteConfig(in / kConfigName, after.quantization));
  KIMI_RETURN_IF_ERROR(WriteWholeFile((tmp / kConfigName).string(), config));
  KIMI_RETURN_IF_ERROR(CopyOtherFiles(in, tmp, rewritten));
  // The output must load as what it claims to be.
  KIMI_ASSIGN_OR_RETURN(auto check, ModelDir::Open(tmp.string()));
  KIMI_RETURN_IF_ERROR(check->ValidateLayout());
  return summary;
}

}  // namespace

Result<QuantScheme> ParseQuantScheme(const std::string& name) {
  if (name == "int8") return QuantScheme::kInt8;
  if (name == "mxfp4-dense") return QuantScheme::kMxfp4Dense;
  return Status::InvalidArgument("unknown scheme '" + name + "' (choose int8 or mxfp4-dense)");
}

Result<QuantizeSummary> QuantizeModelDir(const std::string& in_dir, const std::string& out_dir, QuantScheme scheme) {
  std::error_code ec;
  const fs::path in(in_dir), out(out_dir);
  if (!fs::is_directory(in, ec)) return Status::NotFound(in_dir + ": no such model directory");
  if (fs::exists(out, ec) || fs::is_symlink(out, ec)) {
    return Status::AlreadyExists(out_dir + ": already exists (quantize writes a new directory)");
  }
  auto dir = ModelDir::Open(in_dir);
  if (!dir.ok()) return Status::InvalidArgument(in_dir + " is not a Kimi K3 model directory: " + dir.status().message());
  if ((*dir)->shape_only()) return Status::InvalidArgument(in_dir + ": a shape-only model directory has no weights to quantise");
  if (Status s = (*dir)->ValidateLayout(); !s.ok()) {
    return Status::InvalidArgument(in_dir + " is not a Kimi K3 model directory: " + s.message());
  }

  // A sibling of `out`, so that the final rename stays on one file system.
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::random_device rd;
  const fs::path tmp = parent / ("." + out.filename().string() + ".partial-" + std::to_string(rd()));
  if (!fs::create_directory(tmp, ec)) return Status::IOError(tmp.string() + ": cannot create: " + ec.message());
  Result<QuantizeSummary> summary = WriteQuantized(**dir, in, tmp, scheme);
  if (summary.ok() && renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_NOREPLACE) != 0) {
    summary = Status::IOError(out_dir + ": cannot move the finished model into place: " + std::strerror(errno));
  }
  if (!summary.ok()) {
    fs::remove_all(tmp, ec);
    return summary.status().code() == Status::Code::kInvalidArgument
               ? Status::InvalidArgument(in_dir + ": " + summary.status().message())
               : summary.status();
  }
  return summary;
}

}  // namespace kimi
