// kimi-engine info: prints a model's (or a preset's) configuration, sizes per component and the
// memory arithmetic, after validating the directory's files.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "io/k3_presets.h"
#include "kimi/model_dir.h"
#include "kimi/model_size.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& InfoFlags() {
  static const std::vector<FlagSpec> flags = {
      {"model", true, "DIR   model directory (config.json + safetensors)"},
      {"preset", true, "NAME  print a preset's arithmetic without writing it"},
      {"no-validate", false, "      skip checking every tensor against the config"},
      {"bandwidth", true, "GB/S  memory read bandwidth: print the batch-1 decode rate it allows"},
      {"help", false, "      this text"},
  };
  return flags;
}

int Fail(const Status& s) { return ReportFailure("info", s); }

void PrintLayers(const K3Config& c) {
  std::string kinds;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    kinds += c.IsKdaLayer(i) ? 'K' : 'M';
  }
  std::printf("layer kinds (K = KDA, M = MLA): %s\n", kinds.c_str());
}

}  // namespace

int RunInfo(const Args& args) {
  const CommandLine line =
      ParseCommandLine("info", args, InfoFlags(),
                       "info (--model DIR | --preset NAME) [--no-validate] [--bandwidth GB/S]");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  if (flags.Has("model") == flags.Has("preset")) {
    return Fail(Status::InvalidArgument("give exactly one of --model DIR and --preset NAME"));
  }

  double bandwidth = 0;
  if (auto text = flags.Get("bandwidth")) {
    char* end = nullptr;
    bandwidth = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !(bandwidth > 0) || !std::isfinite(bandwidth)) {
      return Fail(Status::InvalidArgument("--bandwidth: expected a positive number of GB/s, got '" + *text + "'"));
    }
  }

  if (auto preset = flags.Get("preset")) {
    auto config = K3Preset(*preset);
    if (!config.ok()) return Fail(Status::InvalidArgument(config.status().message()));
    std::printf("preset %s\n", preset->c_str());
    PrintLayers(*config);
    const K3SizeReport sizes = ComputeK3Sizes(*config);
    std::printf("%s%s", FormatSizeReport(*config, sizes).c_str(), FormatDecodeBytes(sizes, bandwidth).c_str());
    return kExitOk;
  }

  std::string path = *flags.Get("model");
  auto dir = ModelDir::Open(path);
  if (!dir.ok()) return Fail(dir.status());
  const K3Config& config = (*dir)->config();
  std::printf("model %s: %zu tensors in %zu shard file%s%s\n", path.c_str(), (*dir)->tensor_count(),
              (*dir)->shard_files().size(), (*dir)->shard_files().size() == 1 ? "" : "s",
              (*dir)->shape_only() ? " (shape only, no data)" : "");
  PrintLayers(config);
  if (!flags.Has("no-validate")) {
    if (Status s = (*dir)->ValidateLayout(); !s.ok()) return Fail(s);
    std::printf("validated: every tensor the config implies is present with its dtype and shape\n");
  }
  const K3SizeReport sizes = ComputeK3Sizes(config);
  std::printf("%s%s", FormatSizeReport(config, sizes).c_str(), FormatDecodeBytes(sizes, bandwidth).c_str());
  return kExitOk;
}

}  // namespace kimi::tools
