// kimi-engine synth: writes a random-weight Kimi K3 model directory for a named preset.
#include <cstdio>

#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "kimi/k3_tensors.h"
#include "kimi/model_dir.h"
#include "kimi/model_size.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"
#include "tools/synth_tokenizer.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& SynthFlags() {
  static const std::vector<FlagSpec> flags = {
      {"preset", true, "NAME  k3-nano, k3-mini, k3-wide or k3-full-shape"},
      {"out", true, "DIR   directory to write (created if missing)"},
      {"seed", true, "N     random seed (default 0); same seed, same bytes"},
      {"max-shard-mb", true, "N     shard size cap in MiB (default 64; 1 for k3-nano, 1024 for k3-wide,\n"
                             "              16384 for k3-full-shape)"},
      {"tokenizer", true, "DIR   copy this real tokenizer (tiktoken.model, tokenizer_config.json) instead of\n"
                          "              training the demo one; the model takes its vocabulary (k3-full-shape:\n"
                          "              it must fit the published one)"},
      {"source-dir", true, "DIR   repository whose text trains the demo tokenizer (default: the source tree\n"
                           "              this binary was built from)"},
      {"help", false, "      this text"},
  };
  return flags;
}

int Fail(const Status& s) { return ReportFailure("synth", s); }

// The tensor table and the closed-form arithmetic are written independently; they must agree.
Status CheckArithmetic(const K3Config& config, const K3SizeReport& report) {
  uint64_t params = 0, bytes = 0;
  ForEachK3Tensor(config, [&](const TensorSpec& s) {
    params += s.params;
    bytes += s.bytes();
  });
  if (params != report.total.params || bytes != report.total.bytes) {
    return Status::Internal("tensor table gives " + std::to_string(params) + " parameters / " +
                            std::to_string(bytes) + " bytes but the size arithmetic gives " +
                            std::to_string(report.total.params) + " / " + std::to_string(report.total.bytes));
  }
  return Status::OK();
}

}  // namespace

int RunSynth(const Args& args) {
  const CommandLine line =
      ParseCommandLine("synth", args, SynthFlags(),
                       "synth --preset NAME --out DIR [--seed N] [--max-shard-mb N]\n"
                       "                         [--tokenizer DIR | --source-dir DIR]");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  auto preset = flags.Require("preset");
  if (!preset.ok()) return Fail(preset.status());
  auto out = flags.Require("out");
  if (!out.ok()) return Fail(out.status());
  auto seed = flags.GetUint("seed", 0);
  if (!seed.ok()) return Fail(seed.status());
  auto config = K3Preset(*preset);
  if (!config.ok()) return Fail(Status::InvalidArgument(config.status().message()));
  const uint64_t default_shard_mb = *preset == "k3-nano"            ? 1
                                    : *preset == "k3-wide"          ? 1024
                                    : K3PresetIsShapeOnly(*preset) ? 16384
                                                                   : 64;
  auto shard_mb = flags.GetUint("max-shard-mb", default_shard_mb);
  if (!shard_mb.ok()) return Fail(shard_mb.status());
  if (*shard_mb == 0) return Fail(Status::InvalidArgument("--max-shard-mb must be at least 1"));

  // The tokenizer first: it settles the vocabulary, and a real one that does not fit fails
  // before any weights are written. Shape-only directories stand for the real model: they take
  // the real vocabulary or none.
  std::string tokenizer_line = "tokenizer: none (pass --tokenizer DIR with the real K3 ranks)";
  if (!K3PresetIsShapeOnly(*preset) || flags.Has("tokenizer")) {
    SynthTokenizerOptions tok;
    tok.real_tokenizer_dir = flags.Get("tokenizer").value_or("");
    tok.adopt_vocabulary = !K3PresetIsShapeOnly(*preset);
    tok.source_dir = flags.Get("source-dir").value_or(KIMI_ENGINE_SOURCE_DIR);
    auto written = WriteSynthTokenizer(&*config, tok, *out);
    if (!written.ok()) return Fail(written.status());
    tokenizer_line = *written;
  }

  K3SizeReport report = ComputeK3Sizes(*config);
  if (Status s = CheckArithmetic(*config, report); !s.ok()) return Fail(s);

  Result<SynthSummary> summary = K3PresetIsShapeOnly(*preset)
                                     ? WriteShapeOnlyModel(*config, *out, *shard_mb << 20)
                                     : WriteSyntheticModel(*config, *out, {*seed, *shard_mb << 20});
  if (!summary.ok()) return Fail(summary.status());
  if (summary->bytes != report.total.bytes) {
    return Fail(Status::Internal("wrote " + std::to_string(summary->bytes) + " bytes, arithmetic says " +
                                 std::to_string(report.total.bytes)));
  }

  // Re-open what was written: the same checks a loader makes.
  auto dir = ModelDir::Open(*out);
  if (!dir.ok()) return Fail(dir.status());
  if (Status s = (*dir)->ValidateLayout(); !s.ok()) return Fail(s);

  std::printf("wrote %s: preset %s, seed %llu, %llu tensors in %d shard%s%s\n", out->c_str(), preset->c_str(),
              static_cast<unsigned long long>(*seed), static_cast<unsigned long long>(summary->tensors),
              summary->shards, summary->shards == 1 ? "" : "s",
              K3PresetIsShapeOnly(*preset) ? " (shape only: config.json and index, no data)" : "");
  std::printf("%s\n", tokenizer_line.c_str());
  std::printf("%s", FormatSizeReport(*config, report).c_str());
  return kExitOk;
}

}  // namespace kimi::tools
