// kimi-bench-runtime: load figures of the serving runtime (docs/benchmarks.md, "Serving runtime").
//
//   kimi-bench-runtime [--preset k3-mini] [--model DIR] [--streams 1,4,16,64] [--prompt 32]
//                      [--tokens 32] [--batch-tokens 512] [--decode-step-tokens 32] [--threads 0]
//                      [--trace-steps 0] [--first-alone 0]
//   kimi-bench-runtime ... --mixed-long 1024 [--streams 4] [--tokens 64]
//
// Without --model, a synthetic model of the preset is written into a temp dir and removed at
// the end. For each stream count, that many greedy requests (distinct prompts) are submitted at
// once and read to the end. Printed per stream count:
// - e2e tok/s: completion tokens / (first submit -> last token), prefill included;
// - decode tok/s: tokens sampled while every stream was decoding (between the last stream's
//   first token and the first stream's last token) / that window; token times come from each
//   request's own stats (time to first token, then every inter-token gap);
// - busy tok/s: completion tokens / (process CPU seconds during the run / threads), the rate a
//   machine running nothing else would approach (the build machine is shared);
// - busy decode: the same over the window in which every stream decodes (a thread polls the
//   runtime's counters and the process CPU clock every 5 ms);
// - TTFT and inter-token latency, median and p99 over all requests and gaps.
// Then the 16-to-1 ratios and the p99 inter-token latency at 16 streams over the 1-stream median.
// Under each stream count, the steps of the run by kind (RuntimeOptions::step_observer): pure
// decode, of which the first after a step with prompt rows, mixed (decodes beside prompt
// pieces), prefill-only; their count, median and max wall ms and median process CPU ms; and the
// kind of the step that ended each gap at or above the p99 inter-token latency. With
// --trace-steps 1, every step as well (decodes, prompt tokens, wall, forward, CPU, faults).
// With --first-alone 1 the first stream is submitted alone and the others once it has its first
// token: streams joining a running one, which is what happens to the load command whenever the
// scheduler starts its first step before the last request is submitted.
//
// With --mixed-long L (mixed load): for each stream count N, N greedy decodes run twice, once
// alone and once with an L-token prompt submitted as soon as every decode has its first token;
// printed: the inter-token latency (median, p99, max) of the decodes' gaps in each case, and the
// long request's time to first token. Beside the decodes a step carries at most
// min(B - N, PrefillBudget(N)) prompt tokens: --batch-tokens B, and --decode-step-tokens
// (RuntimeOptions::decode_step_token_budget, default 32; 0: off); with B >= L + N and the
// bound off the long prompt runs in one step.
// Prints figures; asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/machine_limits.h"
#include "io/k3_presets.h"
#include "io/k3_synth.h"
#include "kimi/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;
using kimi::ProcessCpuSeconds;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

// The steps the runtime reports while a run is under way.
struct StepLog {
  std::mutex mu;
  std::vector<kimi::StepStats> steps;
  bool trace = false;

  void Add(const kimi::StepStats& s) {
    std::lock_guard<std::mutex> lock(mu);
    steps.push_back(s);
  }
  std::vector<kimi::StepStats> Take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(steps, {});
  }
};

enum StepKind { kDecode, kFirstDecode, kMixed, kPrefill, kNumKinds };
constexpr const char* kKindNames[kNumKinds] = {"decode", "first decode after prompt rows", "mixed", "prefill-only"};

// A pure decode step right after a step that carried prompt rows is its own kind: it is where
// the slow steps were.
std::vector<StepKind> Classify(const std::vector<kimi::StepStats>& steps) {
  std::vector<StepKind> kinds;
  for (size_t i = 0; i < steps.size(); ++i) {
    const kimi::StepStats& s = steps[i];
    if (s.decode_rows == 0) {
      kinds.push_back(kPrefill);
    } else if (s.prompt_tokens > 0) {
      kinds.push_back(kMixed);
    } else {
      kinds.push_back(i > 0 && steps[i - 1].prompt_tokens > 0 ? kFirstDecode : kDecode);
    }
  }
  return kinds;
}

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Per kind: steps, wall median / max, CPU median; then the kinds of the steps in which the
// gaps at or above the p99 ended (`gap_ends`: absolute time of each gap's closing token).
void PrintSteps(const std::vector<kimi::StepStats>& steps, const std::vector<Clock::time_point>& gap_ends,
                const std::vector<double>& gaps, double itl_p99, bool trace) {
  const std::vector<StepKind> kinds = Classify(steps);
  if (trace) {
    for (size_t i = 0; i < steps.size(); ++i) {
      const kimi::StepStats& s = steps[i];
      std::printf("    step %4lld  decodes %3lld  prompt %4lld in %2lld  wall %8.1f  forward %8.1f  cpu %8.1f ms  "
                  "faults %6lld  at %.6f s  %s\n",
                  static_cast<long long>(s.step), static_cast<long long>(s.decode_rows),
                  static_cast<long long>(s.prompt_tokens), static_cast<long long>(s.prompt_pieces),
                  Ms(s.end - s.start), s.forward_seconds * 1e3, s.cpu_seconds * 1e3,
                  static_cast<long long>(s.minor_faults),
                  std::chrono::duration<double>(s.start.time_since_epoch()).count(), kKindNames[kinds[i]]);
    }
  }
  std::printf("    steps:");
  for (int k = 0; k < kNumKinds; ++k) {
    std::vector<double> wall, cpu;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (kinds[i] != k) continue;
      wall.push_back(Ms(steps[i].end - steps[i].start));
      cpu.push_back(steps[i].cpu_seconds * 1e3);
    }
    if (wall.empty()) continue;
    std::printf("  %s %zu (wall p50 %.1f p99 %.1f max %.1f, cpu p50 %.1f p99 %.1f ms)", kKindNames[k], wall.size(),
                Percentile(wall, 0.5), Percentile(wall, 0.99), *std::max_element(wall.begin(), wall.end()),
                Percentile(cpu, 0.5), Percentile(cpu, 0.99));
  }
  std::printf("\n");
  int counts[kNumKinds + 1] = {};  // the last: outside every step
  int at_or_above = 0;
  for (size_t g = 0; g < gaps.size(); ++g) {
    if (gaps[g] < itl_p99) continue;
    ++at_or_above;
    // The closing token was sampled inside the last step that started before it.
    auto it = std::upper_bound(steps.begin(), steps.end(), gap_ends[g],
                               [](Clock::time_point t, const kimi::StepStats& s) { return t < s.start; });
    const bool inside = it != steps.begin() && gap_ends[g] <= std::prev(it)->end;
    ++counts[inside ? kinds[size_t(std::prev(it) - steps.begin())] : kNumKinds];
  }
  std::printf("    gaps >= p99 ITL (%d of %zu) ended in:", at_or_above, gaps.size());
  for (int k = 0; k < kNumKinds; ++k) {
    if (counts[k] > 0) std::printf("  %s %d", kKindNames[k], counts[k]);
  }
  if (counts[kNumKinds] > 0) std::printf("  no step %d", counts[kNumKinds]);
  std::printf("\n");
}

struct Figures {
  double e2e_rate = 0, decode_rate = 0;
  double busy_rate = 0;         // completion tokens per second of process CPU time / threads
  double busy_decode_rate = 0;  // the same over the window in which every stream decodes
  double ttft_p50 = 0, ttft_p99 = 0, itl_p50 = 0, itl_p99 = 0;  // ms
  std::vector<kimi::StepStats> steps;
  std::vector<Clock::time_point> gap_ends;  // of each gap in `gaps` (ms)
  std::vector<double> gaps;
};

Figures RunLoad(kimi::Runtime& runtime, StepLog& log, int streams, int64_t prompt_tokens, int64_t tokens,
                bool first_alone) {
  using namespace kimi;
  const int64_t vocab = runtime.model().config().vocab_size;
  std::vector<std::unique_ptr<RequestHandle>> handles;
  std::vector<Clock::time_point> submitted;
  // A sampler thread polls the counters: the CPU time spent while every stream was decoding
  // (all prompts consumed, none finished) gives a rate that other load on the machine does not
  // bend.
  // The step that ended the previous run may not be published yet when its last event arrives.
  RuntimeCounters before = runtime.Counters();
  while (before.running != 0 || before.waiting != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    before = runtime.Counters();
  }
  log.Take();
  std::atomic<bool> sampling{true};
  double window_tokens = 0, window_cpu = 0;
  std::thread sampler([&] {
    bool in_window = false;
    double cpu0 = 0;
    int64_t tokens0 = 0;
    while (sampling.load()) {
      const RuntimeCounters c = runtime.Counters();
      const double cpu = ProcessCpuSeconds();
      const bool all_decoding = c.prompt_tokens_processed - before.prompt_tokens_processed >= streams * prompt_tokens &&
                                c.requests_finished == before.requests_finished;
      if (all_decoding && !in_window) {
        in_window = true;
        cpu0 = cpu;
        tokens0 = c.tokens_generated;
      } else if (in_window) {
        window_tokens = double(c.tokens_generated - tokens0);
        window_cpu = cpu - cpu0;
        if (!all_decoding) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const double cpu_start = ProcessCpuSeconds();
  const auto start = Clock::now();
  for (int s = 0; s < streams; ++s) {
    GenerationRequest r;
    for (int64_t i = 0; i < prompt_tokens; ++i) r.prompt.push_back(int32_t((s * 131 + i * 17 + 1) % vocab));
    r.sampling.temperature = 0;
    r.max_tokens = tokens;
    submitted.push_back(Clock::now());
    handles.push_back(runtime.Submit(std::move(r)));
    GenerationEvent first;  // its statistics arrive with the finish event
    if (s == 0 && first_alone && streams > 1) handles[0]->Next(&first);
  }
  std::vector<double> ttft, itl;
  std::vector<Clock::time_point> gap_ends;
  std::vector<std::vector<double>> token_times(static_cast<size_t>(streams));  // seconds since start
  int64_t generated = 0;
  for (int s = 0; s < streams; ++s) {
    GenerationEvent e;
    while (handles[size_t(s)]->Next(&e)) {
      if (e.kind == GenerationEvent::Kind::kError) std::fprintf(stderr, "stream %d: %s\n", s, e.error.ToString().c_str());
      if (e.kind != GenerationEvent::Kind::kFinish) continue;
      ttft.push_back(e.stats.time_to_first_token_seconds * 1e3);
      double t = std::chrono::duration<double>(submitted[size_t(s)] - start).count() + e.stats.time_to_first_token_seconds;
      token_times[size_t(s)].push_back(t);
      double since_submit = e.stats.time_to_first_token_seconds;  // on the runtime's own clock origin
      for (double gap : e.stats.inter_token_seconds) {
        itl.push_back(gap * 1e3);
        token_times[size_t(s)].push_back(t += gap);
        since_submit += gap;
        gap_ends.push_back(e.stats.submitted +
                           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(since_submit)));
      }
      generated += e.stats.completion_tokens;
    }
  }
  sampling = false;
  sampler.join();
  Figures f;
  const double threads = double(runtime.model().threads());
  f.busy_decode_rate = window_cpu > 0 ? window_tokens / (window_cpu / threads) : 0;
  const double busy = (ProcessCpuSeconds() - cpu_start) / threads;
  f.busy_rate = busy > 0 ? double(generated) / busy : 0;
  double end = 0, all_decoding = 0, first_done = 1e300;
  for (const auto& times : token_times) {
    if (times.empty()) continue;
    end = std::max(end, times.back());
    all_decoding = std::max(all_decoding, times.front());
    first_done = std::min(first_done, times.back());
  }
  f.e2e_rate = end > 0 ? double(generated) / end : 0;
  int64_t in_window = 0;
  for (const auto& times : token_times) {
    for (double t : times) in_window += (t > all_decoding && t <= first_done) ? 1 : 0;
  }
  f.decode_rate = first_done > all_decoding ? double(in_window) / (first_done - all_decoding) : 0;
  f.ttft_p50 = Percentile(ttft, 0.5);
  f.ttft_p99 = Percentile(ttft, 0.99);
  f.itl_p50 = Percentile(itl, 0.5);
  f.itl_p99 = Percentile(itl, 0.99);
  f.steps = log.Take();
  f.gap_ends = std::move(gap_ends);
  f.gaps = std::move(itl);
  return f;
}

struct MixedFigures {
  double itl_p50 = 0, itl_p99 = 0, itl_max = 0;  // ms, the decodes' gaps
  double long_ttft = 0;                          // ms, the long request
};

// N decodes; with long_prompt > 0, a long prompt arrives once each decode has its first token.
MixedFigures RunMixed(kimi::Runtime& runtime, int streams, int64_t prompt_tokens, int64_t tokens, int64_t long_prompt,
                      int salt) {
  using namespace kimi;
  const int64_t vocab = runtime.model().config().vocab_size;
  auto request = [&](int64_t length, int id, int64_t max_tokens) {
    GenerationRequest r;
    for (int64_t i = 0; i < length; ++i) r.prompt.push_back(int32_t((id * 977 + salt * 7919 + i * 31 + 3) % vocab));
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    return r;
  };
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (int s = 0; s < streams; ++s) handles.push_back(runtime.Submit(request(prompt_tokens, s, tokens)));
  GenerationEvent e;
  for (auto& h : handles) h->Next(&e);  // every decode has its first token
  std::unique_ptr<RequestHandle> long_handle;
  if (long_prompt > 0) long_handle = runtime.Submit(request(long_prompt, 1000, 1));
  std::vector<double> itl;
  for (auto& h : handles) {
    while (h->Next(&e)) {
      if (e.kind != GenerationEvent::Kind::kFinish) continue;
      for (double gap : e.stats.inter_token_seconds) itl.push_back(gap * 1e3);
    }
  }
  MixedFigures f;
  if (long_handle) {
    while (long_handle->Next(&e)) {
      if (e.kind == GenerationEvent::Kind::kFinish) f.long_ttft = e.stats.time_to_first_token_seconds * 1e3;
      if (e.kind == GenerationEvent::Kind::kError) std::fprintf(stderr, "long: %s\n", e.error.ToString().c_str());
    }
  }
  f.itl_p50 = Percentile(itl, 0.5);
  f.itl_p99 = Percentile(itl, 0.99);
  f.itl_max = itl.empty() ? 0 : *std::max_element(itl.begin(), itl.end());
  return f;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

void PrintMixed(kimi::Runtime& runtime, const std::vector<int>& stream_counts, int64_t prompt, int64_t tokens,
                int64_t long_prompt) {
  std::printf("mixed load: decodes alone, then with a %lld-token prompt arriving once each has its first token\n",
              static_cast<long long>(long_prompt));
  std::printf("%8s %26s %26s %16s\n", "streams", "alone ITL p50/p99/max ms", "with long ITL p50/p99/max",
              "long TTFT ms");
  int salt = 0;
  for (int streams : stream_counts) {
    const MixedFigures alone = RunMixed(runtime, streams, prompt, tokens, 0, ++salt);
    const MixedFigures mixed = RunMixed(runtime, streams, prompt, tokens, long_prompt, ++salt);
    std::printf("%8d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %16.1f\n", streams, alone.itl_p50, alone.itl_p99,
                alone.itl_max, mixed.itl_p50, mixed.itl_p99, mixed.itl_max, mixed.long_ttft);
    std::fflush(stdout);
  }
}

void PrintLoad(kimi::Runtime& runtime, StepLog& log, const std::vector<int>& stream_counts, int64_t prompt,
               int64_t tokens, bool first_alone) {
  std::printf("%8s %10s %12s %11s %12s %12s %12s %12s %12s\n", "streams", "e2e tok/s", "decode tok/s", "busy tok/s",
              "busy decode", "ttft p50 ms", "ttft p99 ms", "itl p50 ms", "itl p99 ms");
  std::map<int, Figures> results;
  for (int streams : stream_counts) {
    Figures f = RunLoad(runtime, log, streams, prompt, tokens, first_alone);
    // No window when the first stream finishes before the last one has its prompt consumed.
    auto rate = [](double r) {
      char text[32] = "n/a";
      if (r > 0) std::snprintf(text, sizeof(text), "%.2f", r);
      return std::string(text);
    };
    std::printf("%8d %10.2f %12s %11.2f %12s %12.1f %12.1f %12.1f %12.1f\n", streams, f.e2e_rate,
                rate(f.decode_rate).c_str(), f.busy_rate, rate(f.busy_decode_rate).c_str(), f.ttft_p50, f.ttft_p99,
                f.itl_p50, f.itl_p99);
    PrintSteps(f.steps, f.gap_ends, f.gaps, f.itl_p99, log.trace);
    std::fflush(stdout);
    results[streams] = std::move(f);
  }
  if (results.count(1) && results.count(16)) {
    const Figures &one = results[1], &sixteen = results[16];
    std::printf("16-to-1 aggregate: decode %.2fx, e2e %.2fx, busy %.2fx, busy decode %.2fx; "
                "p99 ITL at 16 / median ITL at 1: %.2fx\n",
                sixteen.decode_rate / one.decode_rate, sixteen.e2e_rate / one.e2e_rate,
                sixteen.busy_rate / one.busy_rate, sixteen.busy_decode_rate / one.busy_decode_rate,
                sixteen.itl_p99 / one.itl_p50);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kimi;
  namespace fs = std::filesystem;
  std::map<std::string, std::string> args = {{"--preset", "k3-mini"}, {"--model", ""},       {"--streams", "1,4,16,64"},
                                             {"--prompt", "32"},      {"--tokens", "32"},    {"--batch-tokens", "512"},
                                             {"--threads", "0"},      {"--mixed-long", "0"},  {"--decode-step-tokens", ""},
                                             {"--trace-steps", "0"},  {"--first-alone", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (args.count(argv[i]) == 0) {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
    args[argv[i]] = argv[i + 1];
  }
  std::string dir = args["--model"];
  fs::path temp;
  if (dir.empty()) {
    auto config = K3Preset(args["--preset"]);
    if (!config.ok()) {
      std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
      return 1;
    }
    temp = fs::temp_directory_path() / ("kimi_runtime_bench_" + std::to_string(::getpid()));
    auto written = WriteSyntheticModel(*config, temp.string(), {/*seed=*/7, /*max_shard_bytes=*/1u << 30});
    if (!written.ok()) {
      std::fprintf(stderr, "%s\n", written.status().ToString().c_str());
      return 1;
    }
    dir = temp.string();
  }
  ModelOptions model_options;
  model_options.threads = std::stoi(args["--threads"]);
  auto model = Model::Load(dir, model_options);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  const std::vector<int> stream_counts = ParseList(args["--streams"]);
  const int64_t prompt = std::stoll(args["--prompt"]), tokens = std::stoll(args["--tokens"]);
  RuntimeOptions options;
  const int64_t long_prompt = std::stoll(args["--mixed-long"]);
  // In mixed load the long request runs beside the decodes.
  options.max_num_seqs = std::max(1, *std::max_element(stream_counts.begin(), stream_counts.end())) + (long_prompt > 0);
  options.max_num_batched_tokens = std::max<int64_t>(std::stoll(args["--batch-tokens"]), options.max_num_seqs);
  if (!args["--decode-step-tokens"].empty()) options.decode_step_token_budget = std::stoll(args["--decode-step-tokens"]);
  options.memory_budget_bytes = uint64_t(2) << 30;
  StepLog log;
  log.trace = args["--trace-steps"] != "0";
  if (long_prompt == 0) options.step_observer = [&log](const StepStats& s) { log.Add(s); };
  auto runtime = Runtime::Create(std::move(model).value(), options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str());
    return 1;
  }
  std::printf("model %s, %d threads, prompt %lld tokens, %lld output tokens per stream, greedy, "
              "max_num_batched_tokens %lld, decode_step_token_budget %lld\n",
              dir.c_str(), (*runtime)->model().threads(), static_cast<long long>(prompt),
              static_cast<long long>(tokens), static_cast<long long>(options.max_num_batched_tokens),
              static_cast<long long>(options.decode_step_token_budget));
  if (long_prompt > 0) {
    PrintMixed(**runtime, stream_counts, prompt, tokens, long_prompt);
  } else {
    PrintLoad(**runtime, log, stream_counts, prompt, tokens, args["--first-alone"] != "0");
  }
  const RuntimeCounters c = (*runtime)->Counters();
  std::printf("steps %lld, prefix cache hits %lld of %lld, preemptions %lld\n", static_cast<long long>(c.steps),
              static_cast<long long>(c.prefix_cache_hits), static_cast<long long>(c.prefix_cache_queries),
              static_cast<long long>(c.preemptions));
  runtime->reset();
  if (!temp.empty()) fs::remove_all(temp);
  return 0;
}
