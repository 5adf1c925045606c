// kimi-bench-bf16-stream: how close the BF16 decode GEMV streams to a plain read of the same
// mapped bytes, on a model's own matrices.
//
// Maps every shard of a model directory (the engine's SafetensorsFile, weights read in place as
// the engine reads them) and takes every 2-D BF16 tensor except the embedding. Each pass, one
// after another on the calling thread: a plain 32-bit integer sum over all those bytes (the
// fastest the thread reads them), the active table's GEMV with 1 activation row over every
// matrix, and the GEMV with --rows rows. Times are thread CPU time, so other jobs on a shared
// machine slow a pass only through the memory system; prints best and median per pass, the
// GEMV's rate over the plain sum's (median of per-pass ratios) and FMA rates.
// --cutover: instead, GEMV against the blocked GEMM at 8, 16 and 32 rows (where MatmulBf16
// switches from one to the other).
// Usage: kimi-bench-bf16-stream --model DIR [--passes 9] [--rows 16] [--cutover]
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "kimi/safetensors.h"

namespace kimi {
namespace {

struct Matrix {
  const uint16_t* w;
  int64_t N, K;
};

double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

template <typename Fn>
double Timed(Fn&& fn) {
  const double start = ThreadSeconds();
  fn();
  return ThreadSeconds() - start;
}

double Best(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Sum of every 32-bit word, four independent vector sums: the read the GEMV is compared with.
__attribute__((target("avx2"))) uint32_t PlainSum(const std::vector<Matrix>& mats) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (const Matrix& m : mats) {
    const auto* p = reinterpret_cast<const __m256i*>(m.w);
    const int64_t n = m.N * m.K / 16;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a = _mm256_add_epi32(a, _mm256_loadu_si256(p + i));
      b = _mm256_add_epi32(b, _mm256_loadu_si256(p + i + 1));
      c = _mm256_add_epi32(c, _mm256_loadu_si256(p + i + 2));
      d = _mm256_add_epi32(d, _mm256_loadu_si256(p + i + 3));
    }
  }
  a = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
  return static_cast<uint32_t>(_mm256_extract_epi32(a, 0));
}

int Run(int argc, char** argv) {
  std::string dir;
  int passes = 9, rows = 16;
  bool cutover = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--model" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--passes" && i + 1 < argc) {
      passes = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--rows" && i + 1 < argc) {
      rows = std::clamp(std::atoi(argv[++i]), 1, 64);
    } else if (arg == "--cutover") {
      cutover = true;
    } else {
      std::fprintf(stderr, "usage: kimi-bench-bf16-stream --model DIR [--passes 9] [--rows 16] [--cutover]\n");
      return 2;
    }
  }
  if (dir.empty() || !cpu::HasAvx2Fma()) {
    std::fprintf(stderr, dir.empty() ? "--model DIR is required\n" : "needs AVX2 for the plain sum\n");
    return 2;
  }
  std::vector<std::unique_ptr<SafetensorsFile>> shards;
  std::vector<Matrix> mats;
  double bytes = 0;
  int64_t max_n = 0, max_k = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    auto shard = SafetensorsFile::Open(entry.path().string());
    if (!shard.ok()) {
      std::fprintf(stderr, "%s\n", shard.status().ToString().c_str());
      return 1;
    }
    for (const TensorView& t : (*shard)->tensors()) {
      if (t.dtype != DType::kBF16 || t.shape.size() != 2 || t.name.find("embed_tokens") != std::string::npos) continue;
      mats.push_back({static_cast<const uint16_t*>(t.data), t.shape[0], t.shape[1]});
      bytes += 2.0 * double(t.numel());
      max_n = std::max(max_n, t.shape[0]);
      max_k = std::max(max_k, t.shape[1]);
    }
    shards.push_back(std::move(*shard));
  }
  if (mats.empty()) {
    std::fprintf(stderr, "no BF16 matrices in %s\n", dir.c_str());
    return 1;
  }
  const kernels::KernelTable& table = kernels::ActiveKernels();
  std::vector<float> x(64 * max_k), y(64 * max_n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6) / 8;
  auto product = [&](kernels::MatmulBf16Fn fn, int64_t M) {
    for (const Matrix& m : mats) fn(x.data(), m.K, m.w, M, m.N, m.K, y.data(), m.N);
  };
  const double weights = bytes / 2;  // FMAs per activation row
  std::printf("%zu BF16 matrices, %.1f MB, kernels %s, %d passes, thread CPU time\n", mats.size(), bytes / 1e6,
              table.isa, passes);

  if (cutover) {
    for (int64_t M : {8, 16, 32}) {
      std::vector<double> gemv, gemm;
      for (int p = 0; p < passes; ++p) {
        gemv.push_back(Timed([&] { product(table.gemv_bf16, M); }));
        gemm.push_back(Timed([&] { product(table.gemm_bf16, M); }));
      }
      std::printf("M=%-3lld gemv best %8.2f ms (%5.2f G FMA/s) median %8.2f ms | gemm best %8.2f ms (%5.2f G FMA/s) "
                  "median %8.2f ms\n",
                  static_cast<long long>(M), Best(gemv) * 1e3, weights * M / Best(gemv) / 1e9, Median(gemv) * 1e3,
                  Best(gemm) * 1e3, weights * M / Best(gemm) / 1e9, Median(gemm) * 1e3);
    }
    return 0;
  }

  volatile uint32_t sink = PlainSum(mats);
  product(table.gemv_bf16, 1);
  std::vector<double> sum, one, many, ratio;
  for (int p = 0; p < passes; ++p) {
    sum.push_back(Timed([&] { sink = sink + PlainSum(mats); }));
    one.push_back(Timed([&] { product(table.gemv_bf16, 1); }));
    many.push_back(Timed([&] { product(table.gemv_bf16, rows); }));
    ratio.push_back(sum.back() / one.back());
  }
  auto row = [&](const char* name, const std::vector<double>& t, double fmas) {
    std::printf("%-16s best %8.2f ms %6.2f GB/s %6.2f G FMA/s | median %8.2f ms %6.2f GB/s\n", name, Best(t) * 1e3,
                bytes / Best(t) / 1e9, fmas / Best(t) / 1e9, Median(t) * 1e3, bytes / Median(t) / 1e9);
  };
  row("plain sum", sum, 0);
  row("gemv 1 row", one, weights);
  row(("gemv " + std::to_string(rows) + " rows").c_str(), many, weights * rows);
  std::printf("gemv 1 row / plain sum (per pass): median %.3f, best %.3f\n", Median(ratio),
              *std::max_element(ratio.begin(), ratio.end()));
  return 0;
}

}  // namespace
}  // namespace kimi

int main(int argc, char** argv) { return kimi::Run(argc, argv); }
