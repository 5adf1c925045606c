#include "io/k3_synth.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/whole_file.h"
#include "io/safetensors_writer.h"
#include "kimi/k3_tensors.h"
#include "kimi/safetensors.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// A deterministic stream of uniform and normal draws keyed by (seed, name).
class Draws {
 public:
  Draws(uint64_t seed, std::string_view name) : state_(seed ^ Fnv1a(name)) { SplitMix64(state_); }
  double Uniform() { return static_cast<double>(SplitMix64(state_) >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = Uniform(), u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

uint64_t Numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

void PutFloat(std::vector<uint8_t>& out, size_t i, DType dtype, float v) {
  if (dtype == DType::kBF16) {
    uint16_t b = F32ToBf16(v);
    std::memcpy(out.data() + 2 * i, &b, 2);
  } else {
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
}

// Both halves of one MXFP4 expert matrix (`weight_packed` and `weight_scale`), drawn as one
// float matrix from the name without the suffix, so they match. The writer asks for the two
// halves one after the other; keeping the last matrix's halves draws each matrix once.
struct Mxfp4Halves {
  std::string base;
  std::vector<uint8_t> packed, scale;
};

void DrawMxfp4(const std::string& base, int64_t rows, int64_t cols, uint64_t seed, Mxfp4Halves& out) {
  out.base = base;
  out.packed.assign(size_t(rows * cols / 2), 0);
  out.scale.assign(size_t(rows * cols / kMxfp4BlockSize), 0);
  Draws d(seed, base);
  double stddev = 1.0 / std::sqrt(static_cast<double>(cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& x : row) x = static_cast<float>(d.Normal() * stddev);
    QuantizeMxfp4Row(row.data(), cols, out.packed.data() + r * (cols / 2), out.scale.data() + r * (cols / kMxfp4BlockSize));
  }
}

void FillMxfp4(const TensorSpec& spec, uint64_t seed, Mxfp4Halves& last, std::vector<uint8_t>& out) {
  bool packed = spec.name.ends_with(".weight_packed");
  std::string base = spec.name.substr(0, spec.name.rfind('.'));
  int64_t rows = spec.shape[0];
  int64_t cols = packed ? spec.shape[1] * 2 : spec.shape[1] * kMxfp4BlockSize;
  if (last.base != base) DrawMxfp4(base, rows, cols, seed, last);
  out = packed ? last.packed : last.scale;
}

void FillTensor(const K3Config& c, const TensorSpec& spec, uint64_t seed, Mxfp4Halves& last_mxfp4,
                std::vector<uint8_t>& out) {
  if (spec.dtype == DType::kU8) {
    FillMxfp4(spec, seed, last_mxfp4, out);
    return;
  }
  out.assign(spec.bytes(), 0);
  const std::string& n = spec.name;
  const uint64_t count = Numel(spec.shape);
  Draws d(seed, n);
  if (n.ends_with("A_log")) {
    for (int64_t i = 0; i < c.linear_attn.num_heads; ++i) {
      PutFloat(out, i, spec.dtype, static_cast<float>(std::log(d.Uniform(1.0, 16.0))));
    }
    return;  // the padding stays zero, as in the published checkpoint
  }
  if (n.ends_with("norm.weight")) {  // every RMSNorm gain, including *_res_norm and o_norm
    for (uint64_t i = 0; i < count; ++i) PutFloat(out, i, spec.dtype, static_cast<float>(d.Uniform(0.9, 1.1)));
    return;
  }
  if (n.ends_with("dt_bias")) {
    for (uint64_t i = 0; i < count; ++i) PutFloat(out, i, spec.dtype, static_cast<float>(d.Uniform(-0.5, 0.5)));
    return;
  }
  if (n.ends_with("e_score_correction_bias")) {
    for (uint64_t i = 0; i < count; ++i) PutFloat(out, i, spec.dtype, static_cast<float>(d.Uniform(-0.05, 0.05)));
    return;
  }
  // Embeddings ~ N(0, 1); everything else by its fan-in, the last dimension: `in` of a Linear
  // [out, in], the kernel width of a depthwise convolution [P, 1, K].
  double stddev = spec.group == TensorGroup::kEmbedding ? 1.0 : 1.0 / std::sqrt(static_cast<double>(spec.shape.back()));
  for (uint64_t i = 0; i < count; ++i) PutFloat(out, i, spec.dtype, static_cast<float>(d.Normal() * stddev));
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError(dir + ": cannot create directory: " + ec.message());
  return Status::OK();
}

// Assigns each tensor (in layout order) to a shard; a shard closes before it would pass the cap.
std::vector<int> PlanShards(const std::vector<TensorSpec>& layout, uint64_t max_shard_bytes, int* count) {
  std::vector<int> shard_of(layout.size());
  int shard = 0;
  uint64_t filled = 0;
  for (size_t i = 0; i < layout.size(); ++i) {
    uint64_t b = layout[i].bytes();
    if (filled > 0 && filled + b > max_shard_bytes) {
      ++shard;
      filled = 0;
    }
    shard_of[i] = shard;
    filled += b;
  }
  *count = layout.empty() ? 0 : shard + 1;
  return shard_of;
}

}  // namespace

std::string ShardFileName(int index, int count) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", index + 1, count);
  return buf;
}

Result<SynthSummary> WriteSyntheticModel(const K3Config& config, const std::string& out_dir,
                                         const SynthOptions& options) {
  KIMI_RETURN_IF_ERROR(ValidateK3Config(config, "synth config: "));
  KIMI_RETURN_IF_ERROR(MakeDir(out_dir));
  const std::vector<TensorSpec> layout = K3TensorLayout(config);
  int shard_count = 0;
  const std::vector<int> shard_of = PlanShards(layout, options.max_shard_bytes, &shard_count);

  SynthSummary summary;
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  std::vector<uint8_t> buffer;
  Mxfp4Halves last_mxfp4;
  size_t next = 0;
  for (int shard = 0; shard < shard_count; ++shard) {
    const std::string file = ShardFileName(shard, shard_count);
    SafetensorsWriter writer;
    writer.SetMetadata("format", "pt");
    size_t end = next;
    while (end < layout.size() && shard_of[end] == shard) {
      const std::string stored = std::string(kPublishedPrefix) + layout[end].name;
      KIMI_RETURN_IF_ERROR(writer.Declare(stored, layout[end].dtype, layout[end].shape));
      weight_map[stored] = file;
      ++end;
    }
    KIMI_RETURN_IF_ERROR(writer.Open((fs::path(out_dir) / file).string()));
    for (size_t i = next; i < end; ++i) {
      if (options.matrices_unwritten && layout[i].shape.size() == 2) {
        KIMI_RETURN_IF_ERROR(writer.Skip(layout[i].bytes()));
        summary.bytes += layout[i].bytes();
      } else {
        FillTensor(config, layout[i], options.seed, last_mxfp4, buffer);
        KIMI_RETURN_IF_ERROR(writer.Append(buffer.data(), buffer.size()));
        summary.bytes += buffer.size();
      }
      ++summary.tensors;
    }
    KIMI_RETURN_IF_ERROR(writer.Finish());
    next = end;
  }
  summary.shards = shard_count;

  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", summary.bytes}};
  index["weight_map"] = std::move(weight_map);
  KIMI_RETURN_IF_ERROR(WriteWholeFile((fs::path(out_dir) / "model.safetensors.index.json").string(), index.dump(2) + "\n"));
  KIMI_RETURN_IF_ERROR(WriteWholeFile((fs::path(out_dir) / "config.json").string(), K3ConfigToJson(config)));
  return summary;
}

Result<SynthSummary> WriteShapeOnlyModel(const K3Config& config, const std::string& out_dir,
                                         uint64_t max_shard_bytes) {
  KIMI_RETURN_IF_ERROR(ValidateK3Config(config, "synth config: "));
  KIMI_RETURN_IF_ERROR(MakeDir(out_dir));
  // Three streaming passes keep memory flat over the ~500k tensors: count shards, then write
  // weight_map, then tensor_specs.
  SynthSummary summary;
  int shard = 0;
  uint64_t filled = 0;
  ForEachK3Tensor(config, [&](const TensorSpec& s) {
    if (filled > 0 && filled + s.bytes() > max_shard_bytes) {
      ++shard;
      filled = 0;
    }
    filled += s.bytes();
    summary.bytes += s.bytes();
    ++summary.tensors;
  });
  summary.shards = shard + 1;

  fs::path path = fs::path(out_dir) / "model.safetensors.index.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError(path.string() + ": cannot create");
  out << "{\n  \"metadata\": {\"total_size\": " << summary.bytes
      << ", \"kimi_shape_only\": true},\n  \"weight_map\": {";
  shard = 0;
  filled = 0;
  bool first = true;
  ForEachK3Tensor(config, [&](const TensorSpec& s) {
    if (filled > 0 && filled + s.bytes() > max_shard_bytes) {
      ++shard;
      filled = 0;
    }
    filled += s.bytes();
    out << (first ? "\n    \"" : ",\n    \"") << kPublishedPrefix << s.name << "\": \""
        << ShardFileName(shard, summary.shards) << "\"";
    first = false;
  });
  out << "\n  },\n  \"tensor_specs\": {";
  first = true;
  ForEachK3Tensor(config, [&](const TensorSpec& s) {
    out << (first ? "\n    \"" : ",\n    \"") << kPublishedPrefix << s.name << "\": {\"dtype\": \""
        << SafetensorsDTypeName(s.dtype) << "\", \"shape\": [";
    for (size_t i = 0; i < s.shape.size(); ++i) out << (i ? ", " : "") << s.shape[i];
    out << "]}";
    first = false;
  });
  out << "\n  }\n}\n";
  out.close();
  if (!out) return Status::IOError(path.string() + ": write failed");
  KIMI_RETURN_IF_ERROR(WriteWholeFile((fs::path(out_dir) / "config.json").string(), K3ConfigToJson(config)));
  return summary;
}

}  // namespace kimi
