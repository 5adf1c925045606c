// kimi-engine bench: prefill and batch-1 decode throughput on a model, set against the
// machine's own limits measured in the same run (memory read bandwidth; the peak of the
// instructions the prefill GEMM runs on: FMA for the avx2 kernels, vdpbf16ps or AMX tdpbf16ps
// for the BF16 dot-product ones, KIMI_KERNELS):
//   effective weight bandwidth = weight bytes read per decoded token × decode tokens/s,
//   prefill FLOP/s             = weight-product flops per token × prefill tokens/s.
// Each rate is also given per busy second (process CPU time divided by the thread count, and the
// machine limits per CPU second of their slowest thread), which stays meaningful when other work
// shares the machine. The prefill runs a second time on a model that keeps IEEE subnormals,
// which shows what flushing them to zero is worth on this machine. Token ids are a fixed pseudo-random sequence; the figures depend only on
// the shapes.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/machine_limits.h"
#include "core/numa_placement.h"
#include "core/thread_pool.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kernels.h"
#include "tools/command.h"
#include "tools/flags.h"
#include "tools/model_args.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& BenchFlags() {
  static const std::vector<FlagSpec> flags = {
      {"model", true, "DIR   model directory"},
      {"threads", true, "N     kernel threads (default: one per hardware thread)"},
      {"prefill-tokens", true, "N     prompt length of the prefill run (default 256)"},
      {"decode-tokens", true, "N     tokens decoded one at a time (default 32)"},
      {"help", false, "      this text"},
  };
  return flags;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The same prefill with IEEE subnormals kept: what flushing them to zero saves on this
// machine (Intel cores take ~100 cycles per subnormal operation), and how far the logits move.
struct SubnormalCost {
  double kept_tokens_per_s = 0;
  double max_logit_difference = 0;
};

Result<SubnormalCost> MeasureSubnormalCost(const std::string& dir, ModelOptions options,
                                           const std::vector<int32_t>& prompt, const std::vector<float>& flushed_logits) {
  options.keep_subnormals = true;
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(dir, options));
  std::vector<float> logits;
  {
    auto warm = model->NewSequence();
    KIMI_RETURN_IF_ERROR(model->Prefill(*warm, std::span<const int32_t>(prompt).first(std::min<size_t>(8, prompt.size())),
                                        LogitsRows::kLast, &logits));
  }
  auto seq = model->NewSequence();
  const auto t0 = std::chrono::steady_clock::now();
  KIMI_RETURN_IF_ERROR(model->Prefill(*seq, prompt, LogitsRows::kLast, &logits));
  SubnormalCost cost;
  cost.kept_tokens_per_s = double(prompt.size()) / Seconds(t0);
  for (size_t v = 0; v < logits.size() && v < flushed_logits.size(); ++v) {
    cost.max_logit_difference = std::max(cost.max_logit_difference, double(std::fabs(logits[v] - flushed_logits[v])));
  }
  return cost;
}

Status Bench(const Flags& flags) {
  KIMI_ASSIGN_OR_RETURN(std::string dir, flags.Require("model"));
  KIMI_ASSIGN_OR_RETURN(uint64_t threads, flags.GetUint("threads", 0));
  KIMI_ASSIGN_OR_RETURN(uint64_t prefill_tokens, flags.GetUint("prefill-tokens", 256));
  KIMI_ASSIGN_OR_RETURN(uint64_t decode_tokens, flags.GetUint("decode-tokens", 32));
  if (prefill_tokens == 0 || decode_tokens == 0) return Status::InvalidArgument("token counts must be >= 1");

  ModelOptions options;
  options.threads = int(threads);
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(dir, options));
  const K3Config& c = model->config();
  std::vector<int32_t> prompt(prefill_tokens);
  uint32_t x = 12345;
  for (auto& t : prompt) t = int32_t((x = x * 1103515245u + 12345u) >> 8) % int32_t(c.vocab_size);

  // Warm-up: read every page of the weights once so the runs below read from memory, not disk,
  // and take no page faults (a short prefill alone would leave unchosen experts unmapped: at
  // k3-wide's 896 experts, most of them), then a short prefill for the scratch buffers.
  const auto touch0 = std::chrono::steady_clock::now();
  uint64_t touched = 0;
  for (const MappedWeightFile& f : model->MappedWeights()) {
    TouchPages(f.data, f.size);
    touched += f.size;
  }
  const double touch_s = Seconds(touch0);
  std::vector<float> logits;
  {
    auto warm = model->NewSequence();
    KIMI_RETURN_IF_ERROR(model->Prefill(*warm, std::span<const int32_t>(prompt).first(std::min<size_t>(8, prompt.size())),
                                        LogitsRows::kLast, &logits));
  }

  // Prefill: one sequence, all prompt tokens.
  auto seq = model->NewSequence();
  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = ProcessCpuSeconds();
  KIMI_RETURN_IF_ERROR(model->Prefill(*seq, prompt, LogitsRows::kLast, &logits));
  const double prefill_s = Seconds(t0);
  const double prefill_busy_s = (ProcessCpuSeconds() - cpu0) / model->threads();
  const std::vector<float> prefill_logits = logits;

  // Decode: batch 1, greedy continuation of the prompt.
  SequenceState* states[] = {seq.get()};
  t0 = std::chrono::steady_clock::now();
  cpu0 = ProcessCpuSeconds();
  for (uint64_t i = 0; i < decode_tokens; ++i) {
    int32_t next = 0;
    for (int64_t v = 1; v < c.vocab_size; ++v) next = logits[v] > logits[next] ? int32_t(v) : next;
    KIMI_RETURN_IF_ERROR(model->DecodeBatch(states, std::span<const int32_t>(&next, 1), &logits));
  }
  const double decode_s = Seconds(t0);
  const double decode_busy_s = (ProcessCpuSeconds() - cpu0) / model->threads();

  KIMI_ASSIGN_OR_RETURN(const SubnormalCost subnormals, MeasureSubnormalCost(dir, options, prompt, prefill_logits));

  // The machine's limits with the same number of threads.
  ThreadPool pool(model->threads());
  const BandwidthResult bw = MeasureMemoryReadBandwidth(&pool);
  const FmaPeakResult fma = MeasureFmaPeak(&pool);
  const FmaPeakResult peak = kernels::PrefillGemmPeak(kernels::ActiveKernels(), &pool, fma);

  const double prefill_tps = double(prefill_tokens) / prefill_s;
  const double decode_tps = double(decode_tokens) / decode_s;
  const double bytes_per_token = double(model->DecodeWeightBytesPerToken());
  const double flops_per_token = double(model->MatmulFlopsPerToken());
  const double weight_gbps = bytes_per_token * decode_tps / 1e9;
  const double prefill_gflops = flops_per_token * prefill_tps / 1e9;
  const double busy_weight_gbps = bytes_per_token * double(decode_tokens) / decode_busy_s / 1e9;
  const double busy_prefill_gflops = flops_per_token * double(prefill_tokens) / prefill_busy_s / 1e9;

  std::printf("model                     %s (%lld layers, hidden %lld, %lld experts top-%lld)\n", dir.c_str(),
              (long long)c.num_hidden_layers, (long long)c.hidden_size, (long long)c.num_experts,
              (long long)c.num_experts_per_token);
  std::printf("threads                   %d (kernels: %s)\n", model->threads(), kernels::ActiveIsa());
  std::printf("warm-up                   read %.1f MB of weights in %.2f s\n", double(touched) / 1e6, touch_s);
  std::printf("prefill                   %llu tokens in %.3f s: %.1f tokens/s\n", (unsigned long long)prefill_tokens,
              prefill_s, prefill_tps);
  std::printf("decode (batch 1)          %llu tokens in %.3f s: %.2f tokens/s\n", (unsigned long long)decode_tokens,
              decode_s, decode_tps);
  std::printf("weight bytes per token    %.1f MB\n", bytes_per_token / 1e6);
  std::printf("effective weight bw       %.2f GB/s\n", weight_gbps);
  std::printf("measured memory bw        %.2f GB/s (%d threads, %zu MB buffer)\n", bw.gbytes_per_s, bw.threads,
              bw.bytes >> 20);
  std::printf("decode bw ratio           %.3f (effective weight bw / measured bw)\n", weight_gbps / bw.gbytes_per_s);
  std::printf("prefill matmul FLOP/s     %.2f GFLOP/s (%.1f MFLOP per token)\n", prefill_gflops, flops_per_token / 1e6);
  std::printf("measured FMA peak         %.2f GFLOP/s (%s, %d threads)\n", fma.gflops, fma.isa, fma.threads);
  if (peak.isa != fma.isa) {
    std::printf("measured %-16s %.2f GFLOP/s (%s, %d threads)\n", "prefill GEMM peak", peak.gflops, peak.isa,
                peak.threads);
  }
  std::printf("prefill peak ratio        %.3f (prefill FLOP/s / %s peak: kernels %s)\n", prefill_gflops / peak.gflops,
              peak.isa, kernels::ActiveIsa());
  std::printf("prefill, subnormals kept  %.1f tokens/s: flush-to-zero is %.2fx as fast; max |logit difference| %.3g\n",
              subnormals.kept_tokens_per_s, prefill_tps / subnormals.kept_tokens_per_s, subnormals.max_logit_difference);
  std::printf("per busy second (CPU time / threads; limits per CPU second of their slowest thread):\n");
  std::printf("  prefill                 %.1f tokens/s, %.2f GFLOP/s vs %s peak %.2f: ratio %.3f\n",
              double(prefill_tokens) / prefill_busy_s, busy_prefill_gflops, peak.isa, peak.gflops_per_cpu_s,
              busy_prefill_gflops / peak.gflops_per_cpu_s);
  std::printf("  decode                  %.2f tokens/s, weight bw %.2f GB/s vs measured %.2f: ratio %.3f\n",
              double(decode_tokens) / decode_busy_s, busy_weight_gbps, bw.gbytes_per_cpu_s,
              busy_weight_gbps / bw.gbytes_per_cpu_s);
  return Status::OK();
}

}  // namespace

int RunBench(const Args& args) {
  return RunWithFlags("bench", args, BenchFlags(), "bench --model DIR [--threads N]", Bench);
}

}  // namespace kimi::tools
