// kimi-bench-runtime [PRESET] [TOKENS]: load figures of the runtime on a synthetic model
// (default k3-nano, written into a temp dir). For 1, 4, 16 concurrent streams of TOKENS output
// tokens each (default 32): aggregate decode tokens/s, median and p99 time to first token and
// inter-token latency, and the 16-to-1 throughput ratio. Prints figures; asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "kimi/runtime.h"

namespace {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kimi;
  namespace fs = std::filesystem;
  const std::string preset = argc > 1 ? argv[1] : "k3-nano";
  const int64_t tokens = argc > 2 ? std::stoll(argv[2]) : 32;
  auto config = K3Preset(preset);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  const fs::path dir = fs::temp_directory_path() / ("kimi_runtime_bench_" + std::to_string(::getpid()));
  auto written = WriteSyntheticModel(*config, dir.string(), {/*seed=*/7, /*max_shard_bytes=*/1u << 30});
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.status().ToString().c_str());
    return 1;
  }
  auto model = Model::Load(dir.string());
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  RuntimeOptions options;
  options.max_num_seqs = 64;
  options.max_num_batched_tokens = 512;
  options.memory_budget_bytes = uint64_t(8) << 30;
  auto runtime = Runtime::Create(std::move(model).value(), options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str());
    return 1;
  }
  const int64_t vocab = (*runtime)->model().config().vocab_size;
  std::printf("preset %s, %lld output tokens per stream, prompt 32 tokens, greedy\n", preset.c_str(),
              static_cast<long long>(tokens));
  std::printf("%8s %12s %12s %12s %12s %12s\n", "streams", "agg tok/s", "ttft p50 ms", "ttft p99 ms", "itl p50 ms",
              "itl p99 ms");
  double single = 0;
  for (int streams : {1, 4, 16}) {
    std::vector<std::unique_ptr<RequestHandle>> handles;
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < streams; ++s) {
      GenerationRequest r;
      for (int i = 0; i < 32; ++i) r.prompt.push_back(int32_t((s * 131 + i * 17) % vocab));
      r.sampling.temperature = 0;
      r.max_tokens = tokens;
      handles.push_back((*runtime)->Submit(std::move(r)));
    }
    std::vector<double> ttft, itl;
    int64_t generated = 0;
    for (auto& h : handles) {
      GenerationEvent e;
      while (h->Next(&e)) {
        if (e.kind == GenerationEvent::Kind::kFinish) {
          ttft.push_back(e.stats.time_to_first_token_seconds * 1e3);
          for (double x : e.stats.inter_token_seconds) itl.push_back(x * 1e3);
          generated += e.stats.completion_tokens;
        }
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = double(generated) / seconds;
    if (streams == 1) single = rate;
    std::printf("%8d %12.1f %12.2f %12.2f %12.2f %12.2f\n", streams, rate, Percentile(ttft, 0.5), Percentile(ttft, 0.99),
                Percentile(itl, 0.5), Percentile(itl, 0.99));
    if (streams == 16 && single > 0) std::printf("16-stream / 1-stream aggregate throughput: %.2fx\n", rate / single);
  }
  runtime->reset();
  fs::remove_all(dir);
  return 0;
}
