#include "core/machine_limits.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace kimi {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Runs fn over [0, n) on every thread; returns the largest CPU time any thread spent in it.
template <typename Fn>
double OnAllThreads(ThreadPool* pool, int64_t n, Fn&& fn) {
  std::atomic<double> slowest{0.0};
  auto timed = [&](int64_t b, int64_t e) {
    const double c0 = ThreadCpuSeconds();
    fn(b, e);
    const double spent = ThreadCpuSeconds() - c0;
    double seen = slowest.load();
    while (spent > seen && !slowest.compare_exchange_weak(seen, spent)) {
    }
  };
  if (pool == nullptr) {
    timed(0, n);
  } else {
    pool->ParallelFor(0, n, 1, [&](int64_t b, int64_t e, int) { timed(b, e); });
  }
  return slowest.load();
}

float SumScalar(const float* p, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

// Sum of squares with a fixed number of iterations of independent chains: ops = iters * lanes.
double FmaLoopScalar(int64_t iters) {
  double a[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const double m = 0.999999, c = 1e-7;
  for (int64_t i = 0; i < iters; ++i)
    for (double& v : a) v = v * m + c;
  double s = 0;
  for (double v : a) s += v;
  return s;
}
constexpr int kScalarFmaPerIter = 8;

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float SumAvx2(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

// 10 independent accumulators cover FMA latency (4–5 cycles) × 2 ports. Named variables, not
// an array: GCC 12 keeps an array of __m256 in memory here, which measured a third of the peak.
constexpr int kAvx2FlopsPerIter = 10 * 8 * 2;
__attribute__((target("avx2,fma"))) float FmaLoopAvx2(int64_t iters) {
  __m256 a0 = _mm256_set1_ps(1.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0;
  const __m256 m = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, add);
    a1 = _mm256_fmadd_ps(a1, m, add);
    a2 = _mm256_fmadd_ps(a2, m, add);
    a3 = _mm256_fmadd_ps(a3, m, add);
    a4 = _mm256_fmadd_ps(a4, m, add);
    a5 = _mm256_fmadd_ps(a5, m, add);
    a6 = _mm256_fmadd_ps(a6, m, add);
    a7 = _mm256_fmadd_ps(a7, m, add);
    a8 = _mm256_fmadd_ps(a8, m, add);
    a9 = _mm256_fmadd_ps(a9, m, add);
    // Keeps the compiler from folding or shortening the chains.
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8),
                     "+x"(a9));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9))));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0];
}

// The same loop in 512-bit registers: where the CPU has AVX-512F the kernels' 512-bit forms
// (docs/kernels.md) do 16 lanes per FMA, so the peak they are measured against is this one.
constexpr int kAvx512FlopsPerIter = 10 * 16 * 2;
__attribute__((target("avx512f"))) float FmaLoopAvx512(int64_t iters) {
  __m512 a0 = _mm512_set1_ps(1.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0;
  const __m512 m = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm512_fmadd_ps(a0, m, add);
    a1 = _mm512_fmadd_ps(a1, m, add);
    a2 = _mm512_fmadd_ps(a2, m, add);
    a3 = _mm512_fmadd_ps(a3, m, add);
    a4 = _mm512_fmadd_ps(a4, m, add);
    a5 = _mm512_fmadd_ps(a5, m, add);
    a6 = _mm512_fmadd_ps(a6, m, add);
    a7 = _mm512_fmadd_ps(a7, m, add);
    a8 = _mm512_fmadd_ps(a8, m, add);
    a9 = _mm512_fmadd_ps(a9, m, add);
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8),
                     "+v"(a9));
  }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                 _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(_mm512_add_ps(a6, a7), _mm512_add_ps(a8, a9))));
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0];
}

// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which its
// -W(maybe-)uninitialized report once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// BF16 pair dot products into fp32 (vdpbf16ps zmm): 16 lanes × 2 products × 2 flops each, 12
// independent chains to cover its latency on two pipes.
constexpr int kBf16DotFlopsPerIter = 12 * 16 * 2 * 2;
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) float Bf16DotLoop(int64_t iters) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
         a10 = a0, a11 = a0;
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm512_dpbf16_ps(a0, x, x);
    a1 = _mm512_dpbf16_ps(a1, x, x);
    a2 = _mm512_dpbf16_ps(a2, x, x);
    a3 = _mm512_dpbf16_ps(a3, x, x);
    a4 = _mm512_dpbf16_ps(a4, x, x);
    a5 = _mm512_dpbf16_ps(a5, x, x);
    a6 = _mm512_dpbf16_ps(a6, x, x);
    a7 = _mm512_dpbf16_ps(a7, x, x);
    a8 = _mm512_dpbf16_ps(a8, x, x);
    a9 = _mm512_dpbf16_ps(a9, x, x);
    a10 = _mm512_dpbf16_ps(a10, x, x);
    a11 = _mm512_dpbf16_ps(a11, x, x);
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8),
                     "+v"(a9), "+v"(a10), "+v"(a11));
  }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                 _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                               _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
  return _mm512_reduce_add_ps(s);
}
#pragma GCC diagnostic pop

// AMX: four independent 16 × 16 fp32 tiles, each taking a 16 × 32 by 32 × 16 BF16 product per
// tdpbf16ps (16·16·32 products, 2 flops each). The operand tiles are loaded once.
constexpr int kAmxFlopsPerIter = 4 * 16 * 16 * 32 * 2;
__attribute__((target("amx-tile,amx-bf16"))) float AmxLoop(int64_t iters) {
  static const cpu::AmxTileConfig config;
  alignas(64) static const uint16_t operand[16 * 32] = {};
  alignas(64) float out[16 * 16];
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  _tile_stored(0, out, 64);
  _tile_release();
  __asm__ volatile("" ::: "memory");  // the tile macros declare no memory operands
  return out[0];
}
#endif

std::atomic<float> g_sink{0};  // keeps results alive

}  // namespace

namespace {
double ClockSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

double ThreadCpuSeconds() { return ClockSeconds(CLOCK_THREAD_CPUTIME_ID); }

double ProcessCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }

BandwidthResult MeasureMemoryReadBandwidth(ThreadPool* pool, size_t bytes, int repeats) {
  BandwidthResult result;
  result.threads = pool ? pool->num_threads() : 1;
  bytes &= ~size_t{4095};
  float* buf = static_cast<float*>(std::aligned_alloc(4096, bytes));
  if (buf == nullptr) return result;
  std::unique_ptr<float, void (*)(void*)> owner(buf, std::free);
  const int64_t pages = static_cast<int64_t>(bytes / 4096);
  // Each thread first touches the pages it later reads (first-touch placement on NUMA).
  OnAllThreads(pool, pages, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (size_t i = 0; i < 1024; ++i) buf[p * 1024 + i] = static_cast<float>(i & 7);
  });
  [[maybe_unused]] const bool avx2 = cpu::HasAvx2Fma();
  double best = 0, best_cpu = 0;
  for (int r = 0; r <= repeats; ++r) {
    auto t0 = Clock::now();
    const double cpu = OnAllThreads(pool, pages, [&](int64_t b, int64_t e) {
      const float* p = buf + b * 1024;
      const size_t count = static_cast<size_t>(e - b) * 1024;
#if defined(__x86_64__)
      float s = avx2 ? SumAvx2(p, count) : SumScalar(p, count);
#else
      float s = SumScalar(p, count);
#endif
      g_sink.store(s, std::memory_order_relaxed);
    });
    double secs = Seconds(t0, Clock::now());
    if (r > 0 && secs > 0) best = std::max(best, static_cast<double>(bytes) / secs / 1e9);
    if (r > 0 && cpu > 0) best_cpu = std::max(best_cpu, static_cast<double>(bytes) / cpu / 1e9);
  }
  result.gbytes_per_s = best;
  result.gbytes_per_cpu_s = best_cpu;
  result.bytes = bytes;
  return result;
}

namespace {

// Calibrates `run(iters)` (a register-only loop of `flops_per_iter` flops per iteration) to
// about `seconds` on one thread, then times it on every thread of `pool` together.
template <typename Run>
FmaPeakResult MeasureLoopPeak(ThreadPool* pool, double seconds, double flops_per_iter, const char* isa, Run&& run) {
  FmaPeakResult result;
  const int threads = pool ? pool->num_threads() : 1;
  result.threads = threads;
  result.isa = isa;
  int64_t iters = 1 << 16;
  for (;;) {
    auto t0 = Clock::now();
    g_sink.store(static_cast<float>(run(iters)), std::memory_order_relaxed);
    double secs = Seconds(t0, Clock::now());
    if (secs > seconds / 4 || iters > (int64_t{1} << 40)) {
      iters = static_cast<int64_t>(iters * (seconds / std::max(secs, 1e-6)));
      break;
    }
    iters *= 4;
  }
  double best = 0, best_cpu = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    const double cpu = OnAllThreads(pool, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) g_sink.store(static_cast<float>(run(iters)), std::memory_order_relaxed);
    });
    double secs = Seconds(t0, Clock::now());
    const double flops = flops_per_iter * static_cast<double>(iters) * threads;
    best = std::max(best, flops / secs / 1e9);
    if (cpu > 0) best_cpu = std::max(best_cpu, flops / cpu / 1e9);
  }
  result.gflops = best;
  result.gflops_per_cpu_s = best_cpu;
  return result;
}

}  // namespace

FmaPeakResult MeasureFmaPeak(ThreadPool* pool, double seconds) {
  const bool avx2 = cpu::HasAvx2Fma(), avx512 = avx2 && cpu::HasAvx512F();
  const double flops_per_iter = avx512 ? 320.0 : avx2 ? 160.0 : 2.0 * kScalarFmaPerIter;
#if defined(__x86_64__)
  static_assert(kAvx2FlopsPerIter == 160 && kAvx512FlopsPerIter == 320);
#endif
  return MeasureLoopPeak(pool, seconds, flops_per_iter, avx512 ? "avx512f-fma" : avx2 ? "avx2-fma" : "scalar",
                         [&](int64_t iters) {
#if defined(__x86_64__)
                           if (avx512) return static_cast<double>(FmaLoopAvx512(iters));
                           if (avx2) return static_cast<double>(FmaLoopAvx2(iters));
#endif
                           return FmaLoopScalar(iters);
                         });
}

FmaPeakResult MeasureBf16DotPeak(ThreadPool* pool, double seconds) {
#if defined(__x86_64__)
  return MeasureLoopPeak(pool, seconds, kBf16DotFlopsPerIter, "avx512bf16-vdpbf16ps",
                         [](int64_t iters) { return static_cast<double>(Bf16DotLoop(iters)); });
#else
  (void)pool, (void)seconds;
  return {};
#endif
}

FmaPeakResult MeasureAmxBf16Peak(ThreadPool* pool, double seconds) {
#if defined(__x86_64__)
  return MeasureLoopPeak(pool, seconds, kAmxFlopsPerIter, "amx-tdpbf16ps",
                         [](int64_t iters) { return static_cast<double>(AmxLoop(iters)); });
#else
  (void)pool, (void)seconds;
  return {};
#endif
}

}  // namespace kimi
