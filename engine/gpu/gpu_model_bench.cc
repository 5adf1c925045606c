// kimi-gpu-model-bench: the whole GPU forward pass (GpuModel) on one model directory, timed.
//   * prefill: one sequence of --prefill tokens (pieces of --max-rows); TFLOP/s counted from the
//     weight products per token (Model::MatmulFlopsPerToken: attention and the KDA recurrence
//     are not counted), and its ratio to --peak-tflops when given;
//   * decode: --steps steps at batch 1 after the prefill (logits copied back each step, as a
//     server would); effective bandwidth = weight bytes one step reads
//     (Model::DecodeWeightBytesPerToken) / step time, and its ratio to --copy-gbs when given.
// With --preset NAME the model is first written to --dir by the synthetic-model writer (seed 1);
// a GPU benchmark preset (bench_presets.h, e.g. k3-h200-40g) is written without its matrices
// and they are generated on the device (GpuModelOptions::synthetic_fill_seed), so a model of tens
// of GB costs seconds, not a disk's worth of writing.
// Prints "| ..." table rows and "result <name> <value> <unit>" lines (engine/gpu/check.sh).
// Usage: kimi-gpu-model-bench --dir DIR [--preset NAME] [--prefill N] [--steps N] [--max-rows N]
//                             [--copy-gbs X] [--peak-tflops Y]
// Exit status: 0; 1 on an error; 2 when no device is visible.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/bench_presets.h"
#include "gpu/gpu_model.h"
#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "kimi/model.h"

namespace kimi::gpu {
namespace {

struct Args {
  std::string dir, preset;
  int64_t prefill = 1024, steps = 64, max_rows = 512;
  double copy_gbs = 0, peak_tflops = 0;
};

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "kimi-gpu-model-bench: %s\n", s.ToString().c_str());
  return 1;
}

int Run(const Args& a) {
  if (DeviceCount() == 0) {
    std::fprintf(stderr, "kimi-gpu-model-bench: no GPU device visible\n");
    return 2;
  }
  const std::string label = a.preset.empty() ? a.dir : a.preset;
  const std::vector<std::string> device_filled = GpuBenchPresetNames();
  const bool fill_on_device = std::find(device_filled.begin(), device_filled.end(), a.preset) != device_filled.end();
  if (!a.preset.empty()) {
    auto config = fill_on_device ? GpuBenchPreset(a.preset) : K3Preset(a.preset);
    if (!config.ok()) return Fail(config.status());
    const auto t0 = std::chrono::steady_clock::now();
    SynthOptions synth{/*seed=*/1, /*max_shard_bytes=*/1ull << 30};
    synth.matrices_unwritten = fill_on_device;
    auto written = WriteSyntheticModel(*config, a.dir, synth);
    if (!written.ok()) return Fail(written.status());
    std::printf("synthesised %s in %s: %.1f s%s\n", a.preset.c_str(), a.dir.c_str(), Seconds(t0),
                fill_on_device ? " (matrices left to the device)" : "");
  }
  // The CPU engine's accounting of bytes and flops per token (the mapping only; nothing runs).
  ModelOptions cpu_options;
  cpu_options.threads = 1;
  auto cpu = Model::Load(a.dir, cpu_options);
  if (!cpu.ok()) return Fail(cpu.status());
  const double bytes_per_step = double((*cpu)->DecodeWeightBytesPerToken());
  const double flops_per_token = double((*cpu)->MatmulFlopsPerToken());

  GpuModelOptions options;
  options.max_rows = a.max_rows;
  options.max_context = a.prefill + a.steps + 1;
  if (fill_on_device) options.synthetic_fill_seed = 1;
  const auto t_load = std::chrono::steady_clock::now();
  auto model = GpuModel::Load(a.dir, options);
  if (!model.ok()) return Fail(model.status());
  GpuModel& m = **model;
  std::printf("loaded %s: %.2f GB of weights, %.2f GB of activations, %.1f s\n", label.c_str(),
              double(m.weight_bytes()) / 1e9, double(m.activation_bytes()) / 1e9, Seconds(t_load));
  const int64_t V = m.config().vocab_size;

  std::vector<int32_t> prompt(size_t(a.prefill));
  uint32_t seed = 12345;
  for (auto& t : prompt) t = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(V);
  std::vector<float> logits;
  {  // warm-up: one short pass compiles nothing but touches every weight once
    auto warm = m.NewSequence();
    if (!warm.ok()) return Fail(warm.status());
    Status st = m.Prefill(**warm, std::span<const int32_t>(prompt.data(), 1), LogitsRows::kLast, &logits);
    if (!st.ok()) return Fail(st);
  }
  auto seq = m.NewSequence();
  if (!seq.ok()) return Fail(seq.status());
  auto t0 = std::chrono::steady_clock::now();
  Status st = m.Prefill(**seq, prompt, LogitsRows::kLast, &logits);
  if (!st.ok()) return Fail(st);
  const double prefill_s = Seconds(t0);
  const double tflops = flops_per_token * double(a.prefill) / prefill_s / 1e12;

  GpuSequence* s = seq->get();
  std::vector<int32_t> greedy;
  int32_t next = 0;
  t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < a.steps; ++i) {
    st = m.DecodeBatch(std::span<GpuSequence* const>(&s, 1), std::span<const int32_t>(&next, 1), &logits, &greedy);
    if (!st.ok()) return Fail(st);
    next = greedy[0];
  }
  const double step_s = Seconds(t0) / double(a.steps);
  const double gbs = bytes_per_step / step_s / 1e9;

  std::printf("| %-12s | prefill %5lld tok | %10.1f ms | %8.2f TFLOP/s | ratio to BF16 peak %s |\n", label.c_str(),
              (long long)a.prefill, prefill_s * 1e3, tflops,
              a.peak_tflops > 0 ? std::to_string(tflops / a.peak_tflops).substr(0, 5).c_str() : "n/a");
  std::printf("| %-12s | decode batch 1    | %10.3f ms | %8.1f GB/s   | ratio to copy bw   %s |\n", label.c_str(),
              step_s * 1e3, gbs, a.copy_gbs > 0 ? std::to_string(gbs / a.copy_gbs).substr(0, 5).c_str() : "n/a");
  std::printf("result model_prefill_tflops %.4g TFLOP/s\n", tflops);
  std::printf("result model_decode_gbs %.4g GB/s\n", gbs);
  if (a.peak_tflops > 0) std::printf("result model_prefill_peak_ratio %.4g x\n", tflops / a.peak_tflops);
  if (a.copy_gbs > 0) std::printf("result model_decode_copy_ratio %.4g x\n", gbs / a.copy_gbs);
  return 0;
}

}  // namespace
}  // namespace kimi::gpu

int main(int argc, char** argv) {
  kimi::gpu::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr) {
      std::fprintf(stderr, "kimi-gpu-model-bench: %s needs a value\n", k.c_str());
      return 1;
    }
    ++i;
    if (k == "--dir") a.dir = v;
    else if (k == "--preset") a.preset = v;
    else if (k == "--prefill") a.prefill = std::atoll(v);
    else if (k == "--steps") a.steps = std::atoll(v);
    else if (k == "--max-rows") a.max_rows = std::atoll(v);
    else if (k == "--copy-gbs") a.copy_gbs = std::atof(v);
    else if (k == "--peak-tflops") a.peak_tflops = std::atof(v);
    else {
      std::fprintf(stderr, "kimi-gpu-model-bench: unknown option %s\n", k.c_str());
      return 1;
    }
  }
  if (a.dir.empty() || a.prefill < 1 || a.steps < 1 || a.max_rows < 1) {
    std::fprintf(stderr, "usage: kimi-gpu-model-bench --dir DIR [--preset NAME] [--prefill N] [--steps N] "
                         "[--max-rows N] [--copy-gbs X] [--peak-tflops Y]\n");
    return 1;
  }
  return kimi::gpu::Run(a);
}
