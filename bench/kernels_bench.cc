// kimi-bench-kernels: throughput of every CPU kernel next to the machine's measured limits.
//
// Prints, for 1 and 2 threads (or --threads a,b,...): memory read bandwidth (STREAM-like),
// FMA peak (register-only loop), then per kernel the time per call, GFLOP/s and GB/s, with
// the ratios that matter: GEMV effective weight bandwidth / measured bandwidth (decode is
// bandwidth-bound) and GEMM GFLOP/s / measured FMA peak (prefill is compute-bound).
// Each line prints the wall time per call, the CPU share the process got while it ran (100% =
// the threads had their cores to themselves), and rates per busy second (CPU time / threads),
// which equal wall-clock rates on an idle machine and stay the kernels' own speed on a shared
// one; the ratios use the limits measured the same way.
// Usage: kimi-bench-kernels [--threads 1,2] [--min-time 0.3] [--quick] [--only SECTION]
// (sections: gemv, k3-mini, small-m, experts, cutover, bf16-batch, gemm, bf16-dot, elementwise, conv, kda, mla,
// routing).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>


#include "core/machine_limits.h"
#include "core/thread_pool.h"
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/gemm_width_avx2.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kernels.h"
#include "kimi/dtype.h"

namespace kimi {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int> threads = {1, 2};
  double min_time = 0.3;
  bool quick = false;
  std::string only;  // run only the sections of this name (empty: all)
};

// Sections: gemv, k3-mini, small-m, experts, cutover, bf16-batch, gemm, bf16-dot, elementwise, conv, kda, mla,
// routing.
bool Section(const Options& opt, const char* name) { return opt.only.empty() || opt.only == name; }

// CPU time the process got during the last TimePerCall, over wall time × threads: 1.0 on an
// idle machine; lower means other processes took the cores and every figure is pessimistic.
double g_last_cpu_share = 0;
double g_last_busy_per_call = 0;  // process CPU seconds per call / threads
int g_threads = 1;

// Seconds per call: repeats the call until min_time has passed (after one warm-up call), and
// reports the mean.
double TimePerCall(const std::function<void()>& fn, double min_time) {
  fn();
  int64_t calls = 0;
  const double cpu0 = ProcessCpuSeconds();
  auto t0 = Clock::now();
  double elapsed = 0;
  do {
    fn();
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (elapsed < min_time);
  const double cpu = ProcessCpuSeconds() - cpu0;
  g_last_cpu_share = cpu / (elapsed * g_threads);
  g_last_busy_per_call = cpu / g_threads / calls;
  return elapsed / calls;
}

// A kernel's 256-bit form (run(0)) against its 512-bit form (run(1)): the best CPU time per
// call of each over 5 alternating rounds (CPU time because the machine is shared; alternating
// so that a machine that slows down over the run favours neither form).
template <class Run>
std::array<double, 2> BestOfTwoForms(const Run& run, double min_time) {
  std::array<double, 2> best = {1e9, 1e9};
  for (int round = 0; round < 5; ++round) {
    for (int wide = 0; wide < 2; ++wide) {
      TimePerCall([&] { run(wide); }, min_time / 5);
      best[wide] = std::min(best[wide], g_last_busy_per_call);
    }
  }
  return best;
}

std::vector<float> Floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<uint8_t> Bytes(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = static_cast<uint8_t>(d(rng));
  return v;
}

// Rates are per busy second (CPU time / threads): equal to wall-clock rates on an idle
// machine, and still the kernel's own speed when other processes share the cores.
void Row(const char* name, const std::string& shape, double secs, double flops, double bytes, const char* ratio_name = nullptr,
         double ratio_limit = 0) {
  const double busy = g_last_busy_per_call > 0 ? g_last_busy_per_call : secs;
  std::printf("  %-24s %-24s %9.3f ms  cpu %3.0f%% %8.2f GFLOP/s %7.2f GB/s", name, shape.c_str(), secs * 1e3,
              100 * g_last_cpu_share, flops / busy / 1e9, bytes / busy / 1e9);
  if (ratio_name) std::printf("   %s %.2f", ratio_name, (ratio_name[0] == 'b' ? bytes : flops) / busy / 1e9 / ratio_limit);
  std::printf("\n");
}

// The FLOPs of the products the chunked KDA does for one head over T tokens, step by step as
// kda_chunk.h runs them: per chunk of C, [Kg; Qg]·S0 (2 × C × dv × dk), per sub-block [p, e] of n
// tokens the A/B product ((e+1) × (S+n) × dk), the off-block W (n × dv × p) and the outputs
// (n × dv × (e+1)), then the state (dk × dv × C).
double ChunkedKdaProductFlops(int64_t T, int64_t dk, int64_t dv) {
  double flops = 0;
  for (int64_t t0 = 0; t0 < T; t0 += kernels::kKdaChunk) {
    const int64_t C = std::min(kernels::kKdaChunk, T - t0);
    flops += 2.0 * (2 * C * dv * dk) + 2.0 * dk * dv * C;
    for (int64_t p = 0; p < C; p += kernels::kKdaSub) {
      const int64_t n = std::min(kernels::kKdaSub, C - p), e = p + n - 1;
      flops += 2.0 * (e + 1) * (kernels::kKdaSub + n) * dk + 2.0 * n * dv * p + 2.0 * n * dv * (e + 1);
    }
  }
  return flops;
}

void BenchThreads(int threads, const Options& opt) {
  ThreadPool pool(threads);
  g_threads = threads;
  const double min_time = opt.min_time;
  std::printf("\n== %d thread%s ==\n", threads, threads == 1 ? "" : "s");
  double cpu0 = ProcessCpuSeconds();
  auto t0 = Clock::now();
  BandwidthResult bw = MeasureMemoryReadBandwidth(&pool, opt.quick ? size_t{128} << 20 : size_t{512} << 20);
  double share = (ProcessCpuSeconds() - cpu0) / (std::chrono::duration<double>(Clock::now() - t0).count() * threads);
  std::printf("  measured memory read bandwidth  %8.2f GB/s per busy second, %.2f GB/s wall (%zu MiB buffer)  cpu %3.0f%%\n",
              bw.gbytes_per_cpu_s, bw.gbytes_per_s, bw.bytes >> 20, 100 * share);
  cpu0 = ProcessCpuSeconds();
  t0 = Clock::now();
  FmaPeakResult peak = MeasureFmaPeak(&pool, opt.quick ? 0.1 : 0.3);
  share = (ProcessCpuSeconds() - cpu0) / (std::chrono::duration<double>(Clock::now() - t0).count() * threads);
  std::printf("  measured FMA peak               %8.2f GFLOP/s per busy second, %.2f wall (%s)  cpu %3.0f%%\n",
              peak.gflops_per_cpu_s, peak.gflops, peak.isa, 100 * share);

  // Decode GEMV, BF16: weights larger than the L3 so every call streams them from memory.
  if (Section(opt, "gemv")) {
    const int64_t N = opt.quick ? 4096 : 8192, K = 7168;
    std::vector<uint16_t> w(N * K);
    auto wf = Floats(N * K, 1);
    for (int64_t i = 0; i < N * K; ++i) w[i] = F32ToBf16(wf[i]);
    wf.clear();
    wf.shrink_to_fit();
    for (int64_t M : {1, 4}) {
      auto x = Floats(M * K, 2);
      std::vector<float> y(M * N);
      double s = TimePerCall([&] { kernels::MatmulBf16(x.data(), K, w.data(), M, N, K, y.data(), N, &pool); }, min_time);
      double bytes = double(N) * K * 2;
      Row("gemv_bf16", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=7168", s, 2.0 * M * N * K, bytes,
          "bw/measured", bw.gbytes_per_cpu_s);
    }
  }
  // Decode GEMV, MXFP4.
  if (Section(opt, "gemv")) {
    const int64_t N = opt.quick ? 8192 : 16384, K = 7168;
    auto packed = Bytes(N * K / 2, 3, 0, 255);
    auto scales = Bytes(N * K / 32, 4, 120, 130);
    for (int64_t M : {1, 4}) {
      auto x = Floats(M * K, 5);
      std::vector<float> y(M * N);
      double s = TimePerCall(
          [&] { kernels::MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, y.data(), N, &pool); }, min_time);
      double bytes = double(N) * K / 2 + double(N) * K / 32;
      Row("gemv_mxfp4", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=7168", s, 2.0 * M * N * K, bytes,
          "bw/measured", bw.gbytes_per_cpu_s);
#if defined(__x86_64__)
      // The variant that keeps activations fp32 (not the table's choice), for comparison.
      if (kernels::Avx2Kernels() != nullptr) {
        s = TimePerCall(
            [&] {
              pool.ParallelFor(0, N, 16, [&](int64_t n0, int64_t n1, int) {
                kernels::avx2::GemvMxfp4F32(x.data(), K, packed.data() + n0 * K / 2, scales.data() + n0 * K / 32, M,
                                            n1 - n0, K, y.data() + n0, N);
              });
            },
            min_time);
        Row("gemv_mxfp4 (fp32 act)", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=7168", s,
            2.0 * M * N * K, bytes, "bw/measured", bw.gbytes_per_cpu_s);
      }
#endif
    }
  }
  // Decode at k3-mini's shapes: many small matrices in a row, as one decoded token reads them.
  // BF16: 64 matrices of 1536 × 1024 (192 MiB), each product split over the threads.
  // MXFP4: 1024 experts' matrices of 256 × 512 (68 KiB each, 68 MiB), whole matrices spread over
  // the threads as the MoE layer spreads experts.
  if (Section(opt, "k3-mini")) {
    const int64_t count = opt.quick ? 16 : 64, N = 1536, K = 1024;
    std::vector<uint16_t> w(count * N * K);
    for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToBf16(float(int64_t(i % 97) - 48) / 64.0f);
    auto x = Floats(K, 27);
    std::vector<float> y(N);
    double s = TimePerCall(
        [&] {
          for (int64_t i = 0; i < count; ++i) kernels::MatmulBf16(x.data(), K, w.data() + i * N * K, 1, N, K, y.data(), N, &pool);
        },
        min_time);
    Row("gemv_bf16 k3-mini", std::to_string(count) + "x N=1536 K=1024", s, 2.0 * count * N * K, 2.0 * count * N * K,
        "bw/measured", bw.gbytes_per_cpu_s);
  }
  if (Section(opt, "k3-mini")) {
    const int64_t count = opt.quick ? 256 : 1024, N = 256, K = 512;
    auto packed = Bytes(count * N * K / 2, 28, 0, 255);
    auto scales = Bytes(count * N * K / 32, 29, 120, 130);
    auto x = Floats(count * K, 30);
    std::vector<float> y(count * N);
    double s = TimePerCall(
        [&] {
          pool.ParallelFor(0, count, 1, [&](int64_t e0, int64_t e1, int) {
            for (int64_t e = e0; e < e1; ++e)
              kernels::MatmulMxfp4(x.data() + e * K, K, packed.data() + e * N * K / 2, scales.data() + e * N * K / 32, 1,
                                   N, K, y.data() + e * N, N, nullptr);
          });
        },
        min_time);
    const double bytes = double(count) * (N * K / 2 + N * K / 32);
    Row("gemv_mxfp4 k3-mini", std::to_string(count) + "x N=256 K=512", s, 2.0 * count * N * K, bytes, "bw/measured",
        bw.gbytes_per_cpu_s);
  }
  // Batched decode: the cost per activation row of the small-M products a decode batch of M
  // sequences runs, against M = 1 (per row: 1/M of the call). One k3-mini BF16 matrix
  // (1536 × 1024, 3 MiB) cycled through 16 copies so it comes from memory, and one expert's
  // MXFP4 matrix (256 × 512) cycled through 256 copies, as a MoE layer reads them.
  if (Section(opt, "small-m")) {
    const int64_t copies = opt.quick ? 4 : 16, N = 1536, K = 1024;
    std::vector<uint16_t> w(copies * N * K);
    for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToBf16(float(int64_t(i % 89) - 44) / 64.0f);
    const int64_t eN = 256, eK = 512, experts = opt.quick ? 64 : 256;
    auto packed = Bytes(experts * eN * eK / 2, 31, 0, 255);
    auto scales = Bytes(experts * eN * eK / 32, 32, 120, 130);
    auto x = Floats(16 * K, 33);
    std::vector<float> y(16 * N);
    double bf16_row1 = 0, mxfp4_row1 = 0;
    for (int64_t M : {1, 2, 4, 8, 16}) {
      double s = TimePerCall(
          [&] {
            for (int64_t i = 0; i < copies; ++i)
              kernels::MatmulBf16(x.data(), K, w.data() + i * N * K, M, N, K, y.data(), N, &pool);
          },
          min_time);
      double per_row = g_last_busy_per_call / double(M);
      if (M == 1) bf16_row1 = per_row;
      std::printf("  %-24s %-24s %9.3f ms  cpu %3.0f%%   per row %7.3f ms = %.3f of M=1\n", "small-M bf16",
                  ("M=" + std::to_string(M) + " " + std::to_string(copies) + "x 1536x1024").c_str(), s * 1e3,
                  100 * g_last_cpu_share, per_row * 1e3, per_row / bf16_row1);
      s = TimePerCall(
          [&] {
            for (int64_t e = 0; e < experts; ++e)
              kernels::MatmulMxfp4(x.data(), eK, packed.data() + e * eN * eK / 2, scales.data() + e * eN * eK / 32, M,
                                   eN, eK, y.data(), eN, &pool);
          },
          min_time);
      per_row = g_last_busy_per_call / double(M);
      if (M == 1) mxfp4_row1 = per_row;
      std::printf("  %-24s %-24s %9.3f ms  cpu %3.0f%%   per row %7.3f ms = %.3f of M=1\n", "small-M mxfp4",
                  ("M=" + std::to_string(M) + " " + std::to_string(experts) + "x 256x512").c_str(), s * 1e3,
                  100 * g_last_cpu_share, per_row * 1e3, per_row / mxfp4_row1);
    }
  }
  // Routed experts as a MoE layer runs them: k3-mini's w1 and w3 (256 × 512) and w2 (512 × 256)
  // for M rows per expert (a 16-row decode step gives most experts 1–3), whole experts spread
  // over the threads. 256 experts (53 MB) come from memory; 4 experts (832 KiB) stay in L2,
  // where the product is bound by its instructions alone. Per row: CPU time per expert and
  // activation row, and the weight bytes per busy second.
  if (Section(opt, "experts")) {
    const int64_t F = 256, D = 512, w13_bytes = 2 * F * D / 2, w13_scales = 2 * F * D / 32;
    const int64_t all = opt.quick ? 64 : 256;
    auto w13 = Bytes(all * w13_bytes, 34, 0, 255), w2 = Bytes(all * D * F / 2, 35, 0, 255);
    auto s13 = Bytes(all * w13_scales, 36, 120, 130), s2 = Bytes(all * D * F / 32, 37, 120, 130);
    auto x = Floats(16 * D, 38);
    std::vector<std::vector<float>> hidden(threads, std::vector<float>(16 * 2 * F)), out(threads, std::vector<float>(16 * D));
    for (int64_t experts : {all, int64_t{4}}) {
      for (int64_t M : {1, 2, 3, 4, 8, 16}) {
        double s = TimePerCall(
            [&] {
              pool.ParallelForChunks(0, experts, 1, [&](int64_t e0, int64_t e1, int t) {
                float* h = hidden[size_t(t)].data();
                for (int64_t e = e0; e < e1; ++e) {
                  const uint8_t* p13 = w13.data() + e * w13_bytes;
                  const uint8_t* q13 = s13.data() + e * w13_scales;
                  kernels::MatmulMxfp4(x.data(), D, p13, q13, M, F, D, h, 2 * F, nullptr);
                  kernels::MatmulMxfp4(x.data(), D, p13 + F * D / 2, q13 + F * D / 32, M, F, D, h + F, 2 * F, nullptr);
                  kernels::MatmulMxfp4(h, 2 * F, w2.data() + e * D * F / 2, s2.data() + e * D * F / 32, M, D, F,
                                       out[size_t(t)].data(), D, nullptr);
                }
              });
            },
            min_time);
        const double bytes = double(experts) * 3 * F * D * (0.5 + 1.0 / 32);
        std::printf("  %-24s %-24s %9.3f ms  cpu %3.0f%%   per row and expert %6.2f us  %6.2f GB/s  bw/measured %.2f\n",
                    "experts mxfp4", ("M=" + std::to_string(M) + " " + std::to_string(experts) + " experts").c_str(),
                    s * 1e3, 100 * g_last_cpu_share, g_last_busy_per_call * threads / double(experts * M) * 1e6,
                    bytes / g_last_busy_per_call / 1e9, bytes / g_last_busy_per_call / 1e9 / bw.gbytes_per_cpu_s);
      }
    }
    // The routed experts of one 16-row decode step of k3-mini: 7 MoE layers of 64 experts,
    // each row choosing 8 distinct experts (seeded uniform draw: ~56 experts a layer, most of
    // them with 1–3 rows, as a real step's router gives), every layer's experts dealt over
    // the threads one at a time in expert order as engine/model/moe.cc does. All 448 experts'
    // weights (91 MB) are distinct, so each step reads its ~80 MB from memory. Per step: time,
    // CPU time, weight bytes per busy second and their ratio to the measured bandwidth.
    const int64_t layers = 7, E = 64, rows = 16, top_k = 8, per_expert = 3 * F * D / 2, per_expert_scales = 3 * F * D / 32;
    auto routed_w = Bytes(layers * E * per_expert, 39, 0, 255), routed_s = Bytes(layers * E * per_expert_scales, 40, 120, 130);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> routed(layers);  // per layer: (expert, rows)
    std::mt19937 rng(41);
    int64_t pairs = 0;
    for (int64_t l = 0; l < layers; ++l) {
      std::vector<int64_t> count(E, 0), ids(E);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t e = 0; e < E; ++e) ids[e] = e;
        std::shuffle(ids.begin(), ids.end(), rng);
        for (int64_t j = 0; j < top_k; ++j) ++count[ids[j]];
      }
      for (int64_t e = 0; e < E; ++e) {
        if (count[e] > 0) routed[l].push_back({e, count[e]});
      }
      pairs += int64_t(routed[l].size());
    }
    // One step with `mm` as the product (MatmulMxfp4's arguments without the pool).
    const auto step = [&](auto mm) {
      for (int64_t l = 0; l < layers; ++l) {
        const auto& active = routed[l];
        pool.ParallelForChunks(0, int64_t(active.size()), 1, [&](int64_t a0, int64_t a1, int t) {
          float* h = hidden[size_t(t)].data();
          for (int64_t a = a0; a < a1; ++a) {
            const auto [e, M] = active[size_t(a)];
            const uint8_t* p = routed_w.data() + (l * E + e) * per_expert;
            const uint8_t* q = routed_s.data() + (l * E + e) * per_expert_scales;
            mm(x.data(), D, p, q, M, F, D, h, 2 * F);
            mm(x.data(), D, p + F * D / 2, q + F * D / 32, M, F, D, h + F, 2 * F);
            mm(h, 2 * F, p + F * D, q + F * D / 16, M, D, F, out[size_t(t)].data(), D);
          }
        });
      }
    };
    const auto matmul = [](const float* xm, int64_t ldx, const uint8_t* p, const uint8_t* q, int64_t M, int64_t N,
                           int64_t K, float* y, int64_t ldy) { kernels::MatmulMxfp4(xm, ldx, p, q, M, N, K, y, ldy, nullptr); };
    double s = TimePerCall([&] { step(matmul); }, min_time);
    const double bytes = double(pairs) * 3 * F * D * (0.5 + 1.0 / 32);
    std::printf("  %-24s %-24s %9.3f ms  cpu %3.0f%%   CPU %6.2f ms  %6.2f GB/s  bw/measured %.2f  (%lld experts, %.0f MB)\n",
                "experts mxfp4", "routed 16-row step", s * 1e3, 100 * g_last_cpu_share, g_last_busy_per_call * threads * 1e3,
                bytes / g_last_busy_per_call / 1e9, bytes / g_last_busy_per_call / 1e9 / bw.gbytes_per_cpu_s,
                static_cast<long long>(pairs), bytes / 1e6);
#if defined(__x86_64__)
    // The same step, and 4 experts (in L2) at M rows each, with the decode GEMV in 256-bit
    // registers against the 512-bit form the table takes where the CPU has AVX-512 VNNI: one
    // thread (BestOfTwoForms).
    if (threads == 1 && kernels::Avx2Kernels() != nullptr && cpu::HasAvx512Vnni()) {
      const auto forms = [&](const char* what, auto run) {
        const auto best = BestOfTwoForms(
            [&](int wide) { run(wide != 0 ? kernels::avx2::GemvMxfp4Q16Form512 : kernels::avx2::GemvMxfp4Q16Form256); },
            min_time);
        std::printf("  %-24s %-24s 256-bit %8.3f ms  512-bit %8.3f ms  256/512 %.2f\n", "experts mxfp4 forms", what,
                    best[0] * 1e3, best[1] * 1e3, best[0] / best[1]);
      };
      for (int64_t M : {1, 2, 3, 4, 16}) {
        forms(("M=" + std::to_string(M) + " 4 experts").c_str(), [&](auto mm) {
          float* h = hidden[0].data();
          for (int64_t e = 0; e < 4; ++e) {
            const uint8_t* p13 = w13.data() + e * w13_bytes;
            const uint8_t* q13 = s13.data() + e * w13_scales;
            mm(x.data(), D, p13, q13, M, F, D, h, 2 * F);
            mm(x.data(), D, p13 + F * D / 2, q13 + F * D / 32, M, F, D, h + F, 2 * F);
            mm(h, 2 * F, w2.data() + e * D * F / 2, s2.data() + e * D * F / 32, M, D, F, out[0].data(), D);
          }
        });
      }
      forms("routed 16-row step", step);
    }
#endif
  }
  // The GEMV / GEMM cut-over for decode batches (kernels.cc, UseGemv): both BF16 entries of
  // the active kernel table called directly on one thread, for the row counts a decode step
  // with prefill beside it reaches, at k3-mini's K = 1024 (projections) and 4096 (dense MLP
  // down), and K3's hidden size 7168. The weights are cycled through 16 copies so they come from memory, as in a step.
  if (Section(opt, "cutover")) {
    const kernels::KernelTable& kt = kernels::ActiveKernels();
    const int64_t copies = opt.quick ? 4 : 16, N = 1536;
    for (int64_t K : {int64_t{1024}, int64_t{4096}, int64_t{7168}}) {
      const int64_t n = N * 1024 / K;  // 3 MiB per copy at any K
      std::vector<uint16_t> w(copies * n * K);
      for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToBf16(float(int64_t(i % 89) - 44) / 64.0f);
      auto x = Floats(64 * K, 34);
      std::vector<float> y(64 * n);
      for (int64_t M : {8, 16, 24, 32, 48, 64}) {
        double per_call[2];
        for (int gemm = 0; gemm < 2; ++gemm) {
          const kernels::MatmulBf16Fn fn = gemm != 0 ? kt.gemm_bf16 : kt.gemv_bf16;
          TimePerCall(
              [&] {
                for (int64_t i = 0; i < copies; ++i) fn(x.data(), K, w.data() + i * n * K, M, n, K, y.data(), n);
              },
              min_time);
          per_call[gemm] = g_last_busy_per_call * double(g_threads);  // one thread's CPU time
        }
        std::printf("  %-24s %-24s gemv %8.3f ms  gemm %8.3f ms  gemm/gemv %.2f\n", "cutover bf16",
                    ("M=" + std::to_string(M) + " K=" + std::to_string(K)).c_str(), per_call[0] * 1e3,
                    per_call[1] * 1e3, per_call[1] / per_call[0]);
      }
    }
  }
  // The BF16 decode GEMV at batched decode's row counts, through MatmulBf16 and the pool as a
  // step calls it: weights from memory (16 copies of k3-mini's 1536 × 1024, 48 MiB) and from
  // L2 (one matrix of 128 × 1024 per thread, 256 KiB each; the chunks a thread takes may vary
  // between calls, so with 2 threads part comes from L3), as a fraction of the FMA peak
  // measured above.
  if (Section(opt, "bf16-batch")) {
    const int64_t K = 1024, N = 1536, copies = 16, n_l2 = 128 * threads;
    std::vector<uint16_t> w(copies * N * K);
    for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToBf16(float(int64_t(i % 89) - 44) / 64.0f);
    auto x = Floats(64 * K, 35);
    std::vector<float> y(64 * N);
    for (int64_t M : {8, 16, 32, 64}) {
      const std::string shape = "M=" + std::to_string(M) + " K=" + std::to_string(K);
      double s = TimePerCall(
          [&] {
            for (int64_t i = 0; i < copies; ++i) kernels::MatmulBf16(x.data(), K, w.data() + i * N * K, M, N, K, y.data(), N, &pool);
          },
          min_time);
      Row("bf16 batch, memory", shape, s, copies * 2.0 * M * N * K, copies * 2.0 * N * K, "flops/peak", peak.gflops_per_cpu_s);
      s = TimePerCall([&] { kernels::MatmulBf16(x.data(), K, w.data(), M, n_l2, K, y.data(), n_l2, &pool); }, min_time);
      Row("bf16 batch, L2", shape, s, 2.0 * M * n_l2 * K, 2.0 * n_l2 * K, "flops/peak", peak.gflops_per_cpu_s);
    }
#if defined(__x86_64__)
    // The batch form in 256-bit registers against the 512-bit one the table takes where the CPU
    // has AVX-512F (the peak above is then the 512-bit one): one thread, weights from memory
    // (BestOfTwoForms).
    if (threads == 1 && kernels::Avx2Kernels() != nullptr && cpu::HasAvx512F()) {
      for (int64_t M : {8, 16, 32}) {
        const auto best = BestOfTwoForms(
            [&](int wide) {
              const auto fn = wide != 0 ? kernels::avx2::GemvBf16Batch512 : kernels::avx2::GemvBf16Batch256;
              for (int64_t i = 0; i < copies; ++i) fn(x.data(), K, w.data() + i * N * K, M, N, K, y.data(), N);
            },
            min_time);
        std::printf("  %-24s %-24s 256-bit %8.3f ms  512-bit %8.3f ms  256/512 %.2f\n", "bf16 batch forms",
                    ("M=" + std::to_string(M) + " K=" + std::to_string(K)).c_str(), best[0] * 1e3,
                    best[1] * 1e3, best[0] / best[1]);
      }
    }
#endif
  }
  // Prefill GEMM.
  if (Section(opt, "gemm")) {
    const int64_t M = 256, N = 2048, K = 2048;
    auto x = Floats(M * K, 6);
    std::vector<uint16_t> w(N * K);
    auto wf = Floats(N * K, 7);
    for (int64_t i = 0; i < N * K; ++i) w[i] = F32ToBf16(wf[i]);
    auto packed = Bytes(N * K / 2, 8, 0, 255);
    auto scales = Bytes(N * K / 32, 9, 120, 130);
    std::vector<float> y(M * N);
    const std::string shape = "M=256 N=2048 K=2048";
    double s = TimePerCall([&] { kernels::MatmulBf16(x.data(), K, w.data(), M, N, K, y.data(), N, &pool); }, min_time);
    Row("gemm_bf16", shape, s, 2.0 * M * N * K, double(N) * K * 2, "flops/peak", peak.gflops_per_cpu_s);
    s = TimePerCall([&] { kernels::MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, y.data(), N, &pool); },
                    min_time);
    Row("gemm_mxfp4", shape, s, 2.0 * M * N * K, double(N) * K * 17 / 32, "flops/peak", peak.gflops_per_cpu_s);
#if defined(__x86_64__)
    // The GEMM in 256-bit registers against the 512-bit form the CPU takes where it has
    // AVX-512F, at prefill sizes of k3-mini's projections (KDA q/k/v: N=1536 K=1024; the
    // dense MLP's down projection: N=1024 K=4096): one thread (BestOfTwoForms); flops over
    // the measured FMA peak (512-bit on such a CPU, so
    // the 256-bit form's limit there is 0.5 where the core issues both widths at one rate).
    if (threads == 1 && kernels::Avx2Kernels() != nullptr && cpu::HasAvx512F()) {
      const int before = kernels::avx2::GemmRegisterWidth();
      for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1536, 1024}, {1024, 4096}}) {
        std::vector<uint16_t> wb(n * k);
        for (int64_t i = 0; i < n * k; ++i) wb[i] = F32ToBf16(0.001f * float(i % 1999) - 1.0f);
        for (int64_t m : {32, 128, 512}) {
          auto xm = Floats(m * k, 13);
          std::vector<float> ym(m * n);
          const auto best = BestOfTwoForms(
              [&](int wide) {
                kernels::avx2::SetGemmRegisterWidth(wide != 0 ? 512 : 256);
                kernels::avx2::GemmBf16(xm.data(), k, wb.data(), m, n, k, ym.data(), n);
              },
              min_time);
          const double flops = 2.0 * m * n * k;
          std::printf("  %-24s %-24s 256-bit %8.3f ms %.2f of peak  512-bit %8.3f ms %.2f of peak  256/512 %.2f\n",
                      "gemm bf16 forms",
                      ("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k)).c_str(),
                      best[0] * 1e3, flops / best[0] / 1e9 / peak.gflops_per_cpu_s, best[1] * 1e3,
                      flops / best[1] / 1e9 / peak.gflops_per_cpu_s, best[0] / best[1]);
        }
      }
      kernels::avx2::SetGemmRegisterWidth(before);
    }
#endif
  }
  // The prefill GEMM of each kernel path this CPU has (KIMI_KERNELS: avx2 on FMA, avx512bf16 on
  // vdpbf16ps, amx on AMX tdpbf16ps), split over the threads by output columns as the entry
  // points do, at 256 activation rows and k3-mini's widths (KDA q/k/v: N=1536 K=1024; the dense
  // MLP's down projection: N=1024 K=4096) and K3's (K=7168), each against the measured peak of
  // its own instructions per product (the BF16 dot-product GEMMs do two BF16 products per
  // product: kernels::PrefillGemmPeak).
  if (Section(opt, "bf16-dot")) {
    struct PathPeak {
      const kernels::KernelTable* table;
      FmaPeakResult peak;
    };
    std::vector<PathPeak> paths;
    for (const kernels::KernelTable* t : {kernels::Avx2Kernels(), kernels::Avx512Bf16Kernels(), kernels::AmxKernels()}) {
      if (t != nullptr) paths.push_back({t, kernels::PrefillGemmPeak(*t, &pool, peak, opt.quick ? 0.1 : 0.3)});
    }
    for (const PathPeak& p : paths) {
      if (p.peak.isa == peak.isa) continue;  // the FMA peak, printed above
      std::printf("  measured %-22s %8.2f GFLOP/s per busy second, %.2f wall (peak of kernels %s)\n", p.peak.isa,
                  p.peak.gflops_per_cpu_s, p.peak.gflops, p.table->isa);
    }
    const int64_t M = 256;
    for (const auto& [N, K] : {std::pair<int64_t, int64_t>{1536, 1024}, {1024, 4096}, {2048, 7168}, {7168, 2048}}) {
      std::vector<uint16_t> w(N * K);
      for (int64_t i = 0; i < N * K; ++i) w[i] = F32ToBf16(0.001f * float(i % 1999) - 1.0f);
      const auto x = Floats(M * K, 14);
      std::vector<float> y(M * N);
      const std::string shape = "M=256 N=" + std::to_string(N) + " K=" + std::to_string(K);
      for (const PathPeak& p : paths) {
        const double s = TimePerCall(
            [&] {
              pool.ParallelFor(0, N, 16, [&](int64_t b, int64_t e, int) {
                p.table->gemm_bf16(x.data(), K, w.data() + b * K, M, e - b, K, y.data() + b, N);
              });
            },
            min_time);
        Row(("gemm_bf16 " + std::string(p.table->isa)).c_str(), shape, s, 2.0 * M * N * K, double(N) * K * 2,
            "flops/peak", p.peak.gflops_per_cpu_s);
      }
    }
  }
  // Row-wise and element-wise ops on a prefill-sized activation block.
  if (Section(opt, "elementwise")) {
    const int64_t rows = 64, dim = 7168, n = rows * dim;
    auto x = Floats(n, 10, -4, 4), u = Floats(n, 11, -4, 4), w = Floats(dim, 12);
    std::vector<float> out(n);
    const std::string shape = "64x7168";
    double s = TimePerCall([&] { kernels::RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, out.data(), &pool); }, min_time);
    Row("rms_norm", shape, s, 3.0 * n, 8.0 * n);
    s = TimePerCall([&] { kernels::Situ(x.data(), u.data(), n, 4.0f, 25.0f, out.data(), &pool); }, min_time);
    Row("situ", shape, s, 0, 12.0 * n);
    s = TimePerCall([&] { kernels::Silu(x.data(), n, out.data(), &pool); }, min_time);
    Row("silu", shape, s, 0, 8.0 * n);
    s = TimePerCall([&] { kernels::Softmax(x.data(), rows, dim, out.data(), &pool); }, min_time);
    Row("softmax", shape, s, 0, 8.0 * n);
    s = TimePerCall([&] { kernels::L2Normalize(x.data(), n / 128, 128, 1e-6f, 1.0f, out.data(), &pool); }, min_time);
    Row("l2_normalize", "rows of 128", s, 3.0 * n, 8.0 * n);
  }
  // Short conv over KDA's q/k/v width (3 × 96 heads × 128 = 36864 channels in K3).
  if (Section(opt, "conv")) {
    const int64_t C = 12288, T = 64, width = 4;
    auto x = Floats(T * C, 13), w = Floats(C * width, 14), state = Floats((width - 1) * C, 15);
    std::vector<float> out(T * C);
    double s = TimePerCall(
        [&] { kernels::CausalConv1dSilu(x.data(), C, T, C, w.data(), nullptr, width, state.data(), out.data(), C, &pool); },
        min_time);
    Row("conv1d_silu prefill", "T=64 C=12288 W=4", s, 2.0 * T * C * width, 8.0 * T * C);
    s = TimePerCall(
        [&] { kernels::CausalConv1dSilu(x.data(), C, 1, C, w.data(), nullptr, width, state.data(), out.data(), C, &pool); },
        min_time);
    Row("conv1d_silu decode", "T=1 C=12288 W=4", s, 2.0 * C * width, 4.0 * C * (2 + 2 * width));
  }
  // KDA: 8 heads of 128×128.
  if (Section(opt, "kda")) {
    const int64_t H = 8, dk = 128, dv = 128;
    for (int64_t T : {int64_t{1}, int64_t{512}}) {
      auto q = Floats(T * H * dk, 16, -0.1f, 0.1f), k = Floats(T * H * dk, 17, -0.1f, 0.1f);
      auto v = Floats(T * H * dv, 18), g = Floats(T * H * dk, 19, -0.5f, 0.0f), beta = Floats(T * H, 20, 0, 1);
      auto state = Floats(H * dk * dv, 21, -0.1f, 0.1f);
      std::vector<float> out(T * H * dv);
      kernels::KdaArgs a{q.data(), k.data(), v.data(), g.data(), beta.data(), T, H, dk, dv, H * dk, H * dv, H,
                         0.088f, state.data(), out.data(), H * dv};
      // Each row counts as the GEMM rows do, the FLOPs of the products it does: the
      // recurrence's decay, kᵀS, update and qᵀS; the chunked form's matrix products
      // (ChunkedKdaProductFlops), fewer than the recurrence's at chunks of 32.
      const std::string shape = "T=" + std::to_string(T) + " H=8 128x128";
      double s = TimePerCall([&] { kernels::KdaRecurrent(a, &pool); }, min_time);
      Row("kda_recurrent", shape, s, 8.0 * T * H * dk * dv, 0);
      if (T > 1) {
        s = TimePerCall([&] { kernels::KdaChunked(a, &pool); }, min_time);
        Row("kda_chunked", shape, s, H * ChunkedKdaProductFlops(T, dk, dv), 0, "flops/peak", peak.gflops_per_cpu_s);
#if defined(__x86_64__)
        // The element-wise steps in 256-bit against 512-bit registers (same products, same bits).
        if (threads == 1 && kernels::ActiveKernels().kda_chunked == kernels::avx2::KdaChunked &&
            cpu::HasAvx512F()) {
          const auto best = BestOfTwoForms(
              [&](int wide) {
                (wide != 0 ? kernels::avx2::KdaChunkedForm512 : kernels::avx2::KdaChunkedForm256)(a);
              },
              min_time);
          const double flops = H * ChunkedKdaProductFlops(T, dk, dv);
          std::printf("  %-24s %-24s 256-bit %8.3f ms %.2f of peak  512-bit %8.3f ms %.2f of peak  256/512 %.2f\n",
                      "kda_chunked forms", shape.c_str(), best[0] * 1e3, flops / best[0] / 1e9 / peak.gflops_per_cpu_s,
                      best[1] * 1e3, flops / best[1] / 1e9 / peak.gflops_per_cpu_s, best[0] / best[1]);
        }
#endif
      }
    }
  }
  // The fp32 product under the chunked KDA at the shapes of the three that carry 83% of its
  // FLOPs at chunks of 32 (kda_chunk.h): [Kg; Qg]·S0 (32 × 128 × 128, twice per chunk) and the
  // state update Kdᵀ·W (128 × 128 × 32, A transposed, added to S), and at 128³: one thread's
  // rate, the ceiling the chunked form's products can reach.
  if (Section(opt, "kda") && threads == 1) {
    struct Shape {
      int64_t M, N, K;
      bool a_transposed;
      float beta;
    };
    const auto gemm = kernels::ActiveKernels().gemm_f32;
    for (const Shape& p : {Shape{32, 128, 128, false, 0.0f}, Shape{128, 128, 32, true, 1.0f},
                           Shape{128, 128, 128, false, 0.0f}}) {
      auto a = Floats(p.M * p.K, 23), b = Floats(p.K * p.N, 24);
      std::vector<float> c(p.M * p.N, 0.0f);
      const int64_t a_row = p.a_transposed ? 1 : p.K, a_col = p.a_transposed ? p.M : 1;
      const double s = TimePerCall(
          [&] { gemm(a.data(), a_row, a_col, b.data(), p.N, p.M, p.N, p.K, 1.0f, p.beta, nullptr, c.data(), p.N); }, min_time);
      const std::string shape = "M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) + " K=" +
                                std::to_string(p.K) + (p.a_transposed ? " A^T, C +=" : "");
      Row("gemm_f32", shape, s, 2.0 * p.M * p.N * p.K, 0, "flops/peak", peak.gflops_per_cpu_s);
    }
  }
  // MLA absorbed decode: 16 heads, 4096 cached tokens in pages of 64.
  if (Section(opt, "mla")) {
    const int64_t H = 16, R = 512, P = 64, n_ctx = 4096, page = 64;
    const int64_t pages = n_ctx / page;
    auto pool_data = Floats(pages * page * (R + P), 22);
    std::vector<int32_t> table(pages);
    for (int64_t i = 0; i < pages; ++i) table[i] = static_cast<int32_t>((i * 7) % pages);
    kernels::MlaPagedCache cache{pool_data.data(), table.data(), page, R, P};
    auto ql = Floats(H * R, 23), qp = Floats(H * P, 24);
    std::vector<float> out(H * R);
    double s = TimePerCall(
        [&] { kernels::MlaAbsorbedAttention(ql.data(), qp.data(), 1, H, n_ctx - 1, cache, 0.07f, out.data(), &pool); },
        min_time);
    Row("mla_absorbed decode", "H=16 ctx=4096", s, 4.0 * H * n_ctx * (R + P), 4.0 * n_ctx * (R + P));
#if defined(__x86_64__)
    // Prefill: nq new queries after `past` cached tokens; one thread, both AVX2 forms (MlaAbsorbed
    // takes the products from kMlaMinProductQueries queries on). FLOPs: scores and weighted sum
    // over every visible (query, token) pair.
    if (threads == 1 && kernels::Avx2Kernels() != nullptr) {
      for (const auto& [nq, past] : {std::pair<int64_t, int64_t>{2, 254}, {4, 252}, {8, 248}, {16, 240}, {32, 224}, {256, 0}}) {
        auto qlp = Floats(nq * H * R, 27), qpp = Floats(nq * H * P, 28);
        std::vector<float> outp(nq * H * R);
        const double pairs = double(nq) * past + double(nq) * (nq + 1) / 2;
        const double flops = 2.0 * H * pairs * (R + P + R);
        const std::string shape = "H=16 nq=" + std::to_string(nq) + " past=" + std::to_string(past);
        for (const auto& [name, fn] :
             {std::pair<const char*, kernels::MlaFn>{"mla prefill per query", kernels::avx2::MlaAbsorbedPerQuery},
              std::pair<const char*, kernels::MlaFn>{"mla prefill products", kernels::avx2::MlaAbsorbedProducts}}) {
          s = TimePerCall([&] { fn(qlp.data(), H * R, qpp.data(), H * P, nq, H, past, cache, 0.07f, outp.data(), H * R); },
                          min_time);
          Row(name, shape, s, flops, 0, "flops/peak", peak.gflops_per_cpu_s);
        }
      }
    }
#endif
  }
  // Routing: 896 experts, top 16, 64 tokens.
  if (Section(opt, "routing")) {
    const int64_t T = 64, E = 896;
    const int k = 16;
    auto logits = Floats(T * E, 25, -4, 4), bias = Floats(E, 26, -0.1f, 0.1f);
    std::vector<int32_t> ids(T * k);
    std::vector<float> wts(T * k);
    double s = TimePerCall(
        [&] { kernels::TopKRoute(logits.data(), bias.data(), T, E, k, true, 2.5f, ids.data(), wts.data(), &pool); },
        min_time);
    Row("topk_route", "T=64 E=896 k=16", s, 0, 4.0 * T * E);
  }
}

bool ParseOptions(int argc, char** argv, Options* opt) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      opt->threads.clear();
      std::string list = argv[++i];
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        int t = std::atoi(list.substr(pos, comma - pos).c_str());
        if (t < 1) return false;
        opt->threads.push_back(t);
        pos = comma + 1;
      }
    } else if (a == "--min-time" && i + 1 < argc) {
      opt->min_time = std::atof(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      opt->only = argv[++i];
    } else if (a == "--quick") {
      opt->quick = true;
      opt->min_time = 0.05;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace kimi

int main(int argc, char** argv) {
  kimi::Options opt;
  if (!kimi::ParseOptions(argc, argv, &opt)) {
    std::fprintf(stderr, "usage: kimi-bench-kernels [--threads 1,2] [--min-time SECONDS] [--quick] [--only SECTION]\n");
    return 2;
  }
  std::printf("kimi-bench-kernels: kernels isa=%s\n", kimi::kernels::ActiveIsa());
  for (int t : opt.threads) kimi::BenchThreads(t, opt);
  return 0;
}
