// kimi-gpu-bench: figures of the GPU backend on the card it runs on, printed as a table and as
// "result <name> <value> <unit>" lines (engine/gpu/check.sh collects both).
//   * copy bandwidth: device-to-device memcpy, bytes read + written per second (best of 5)
//   * BF16 matmul peak: cuBLAS n³ product, BF16 in, fp32 accumulate (best of 5)
//   * decode GEMV: MXFP4 and BF16 weights cycled through a set larger than the L2 cache, so
//     every call streams its weights from memory; effective bandwidth = bytes touched / time,
//     and its ratio to the copy bandwidth (the target: >= 0.7 for MXFP4 at batch 1)
//   * a decode sweep: one GEMV over every matrix of a weight set of --sweep-gb GB (a stand-in for
//     the weight traffic of one decode step of a large K3 preset; not a full forward pass)
//   * prefill GEMM TFLOP/s and its ratio to the BF16 peak
//   * one decode step of each other op at K3's published shapes (median time)
// Usage: kimi-gpu-bench [--sweep-gb N] [--quick]
// Exit status: 0, 1 on a GPU error, 2 when no device is visible.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu/gpu_device.h"
#include "gpu/gpu_ops.h"
#include "gpu/peak_matmul.h"

namespace kimi::gpu {
namespace {

struct Bench {
  const GpuStream& stream;
  EventTimer& timer;

  // Milliseconds per call of fn: `reps` timed calls after one warm-up; the median, or the best.
  Result<double> Time(const std::function<Status()>& fn, int reps, bool best = false) {
    KIMI_RETURN_IF_ERROR(fn());
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      KIMI_RETURN_IF_ERROR(timer.Start(stream));
      KIMI_RETURN_IF_ERROR(fn());
      KIMI_RETURN_IF_ERROR(timer.Stop(stream));
      KIMI_ASSIGN_OR_RETURN(float t, timer.ElapsedMs());
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return best ? ms.front() : ms[ms.size() / 2];
  }
};

void Row(const std::string& name, const std::string& shape, double us, const std::string& figure) {
  std::printf("| %-28s | %-34s | %12.1f | %-28s |\n", name.c_str(), shape.c_str(), us, figure.c_str());
}

void ResultLine(const std::string& name, double value, const char* unit) {
  std::printf("result %s %.4g %s\n", name.c_str(), value, unit);
}

std::string Fmt(const char* fmt, double a, double b = 0) {
  char buf[96];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

// A device buffer filled with one byte value (weights and activations only need to be finite).
Result<DeviceBuffer> Filled(uint64_t bytes, uint8_t value, const GpuStream& s) {
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Create(bytes));
  KIMI_RETURN_IF_ERROR(FillBytesAsync(b.data(), value, bytes, s));
  return b;
}

constexpr uint8_t kSmallFloatByte = 0x3c;  // fp32 0x3c3c3c3c ≈ 0.0115, bf16 0x3c3c ≈ 0.0115
constexpr uint8_t kMxfp4Byte = 0x77;       // nibbles 6.0; as a scale 2^-8

struct GemvResult {
  double us, gbps;
};

// One GEMV per matrix over a set of `count` N×K matrices (in one allocation), averaged.
Result<GemvResult> GemvSweep(Bench& b, bool mxfp4, int64_t M, int64_t N, int64_t K, int64_t count, int reps) {
  const uint64_t wbytes = mxfp4 ? uint64_t(N) * K / 2 : uint64_t(N) * K * 2;
  const uint64_t sbytes = mxfp4 ? uint64_t(N) * K / 32 : 0;
  const uint64_t stride = (wbytes + 255) / 256 * 256, sstride = (sbytes + 255) / 256 * 256;
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer w,
                        Filled(stride * count, mxfp4 ? kMxfp4Byte : kSmallFloatByte, b.stream));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer sc, Filled(std::max<uint64_t>(sstride * count, 256), 120, b.stream));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer x, Filled(uint64_t(M) * K * 4, kSmallFloatByte, b.stream));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer y, DeviceBuffer::Create(uint64_t(M) * N * 4));
  auto sweep = [&]() -> Status {
    for (int64_t i = 0; i < count; ++i) {
      if (mxfp4) {
        KIMI_RETURN_IF_ERROR(MatmulMxfp4(x.as<float>(), K, w.as<uint8_t>() + i * stride,
                                         sc.as<uint8_t>() + i * sstride, M, N, K, y.as<float>(), N,
                                         b.stream));
      } else {
        KIMI_RETURN_IF_ERROR(MatmulBf16(x.as<float>(), K,
                                        reinterpret_cast<const uint16_t*>(w.as<uint8_t>() + i * stride), M, N,
                                        K, y.as<float>(), N, b.stream));
      }
    }
    return Status::OK();
  };
  KIMI_ASSIGN_OR_RETURN(double ms, b.Time(sweep, reps, /*best=*/true));
  const double per_call_s = ms * 1e-3 / double(count);
  const double bytes = double(wbytes + sbytes) + double(M) * K * 4 + double(M) * N * 4;
  return GemvResult{per_call_s * 1e6, bytes / per_call_s / 1e9};
}

Status Run(double sweep_gb, bool quick) {
  KIMI_ASSIGN_OR_RETURN(DeviceInfo info, UseDevice(0));
  std::printf("device: %s (%s %d.%d, %d multiprocessors, %.1f GiB, %.1f GiB free)\n", info.name.c_str(),
              info.vendor.c_str(), info.major, info.minor, info.multiprocessors,
              info.total_bytes / 1073741824.0, info.free_bytes / 1073741824.0);
  KIMI_ASSIGN_OR_RETURN(GpuStream stream, GpuStream::Create());
  KIMI_ASSIGN_OR_RETURN(EventTimer timer, EventTimer::Create());
  Bench b{stream, timer};
  const int reps = quick ? 3 : 5;

  std::printf("\n| %-28s | %-34s | %12s | %-28s |\n", "what", "shape", "time (us)", "figure");
  std::printf("|%s|%s|%s|%s|\n", std::string(30, '-').c_str(), std::string(36, '-').c_str(),
              std::string(14, '-').c_str(), std::string(30, '-').c_str());

  // Copy bandwidth.
  const uint64_t copy_bytes = 2ull << 30;
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer src, Filled(copy_bytes, 1, stream));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer dst, DeviceBuffer::Create(copy_bytes));
  KIMI_ASSIGN_OR_RETURN(
      double copy_ms,
      b.Time([&] { return CopyDeviceToDeviceAsync(dst.data(), src.data(), copy_bytes, stream); }, reps,
             true));
  const double copy_gbps = 2.0 * copy_bytes / (copy_ms * 1e-3) / 1e9;
  Row("copy bandwidth (d2d memcpy)", "2 GiB", copy_ms * 1e3, Fmt("%.0f GB/s (read+write)", copy_gbps));
  ResultLine("copy_bandwidth", copy_gbps, "GB/s");
  src = DeviceBuffer();
  dst = DeviceBuffer();

  // BF16 peak.
  double peak = 0.0;
  auto peak_r = MeasureBf16MatmulPeakTflops(8192, reps, stream);
  if (peak_r.ok()) {
    peak = *peak_r;
    Row("BF16 matmul peak (vendor)", "8192^3", 2.0 * 8192.0 * 8192 * 8192 / (peak * 1e12) * 1e6,
        Fmt("%.0f TFLOP/s", peak));
    ResultLine("bf16_peak", peak, "TFLOP/s");
  } else {
    std::printf("| %-28s | %s\n", "BF16 matmul peak", peak_r.status().ToString().c_str());
  }

  // Decode GEMVs over sets larger than L2 (at least 1 GiB each).
  struct GemvShape {
    const char* label;
    int64_t N, K;
  };
  const GemvShape shapes[] = {{"K3 7168x7168", 7168, 7168},
                              {"K3 expert up 3584x7168", 3584, 7168},
                              {"K3 expert down 7168x3584", 7168, 3584},
                              {"mini 1024x1024", 1024, 1024}};
  for (bool mxfp4 : {true, false}) {
    for (const GemvShape& sh : shapes) {
      for (int64_t M : {int64_t(1), int64_t(4), int64_t(8)}) {
        if (quick && M == 4) continue;
        const double per = mxfp4 ? sh.N * double(sh.K) * (0.5 + 1.0 / 32) : sh.N * double(sh.K) * 2;
        const int64_t count = std::max<int64_t>(4, int64_t(std::ceil((1ull << 30) / per)));
        KIMI_ASSIGN_OR_RETURN(GemvResult r, GemvSweep(b, mxfp4, M, sh.N, sh.K, count, reps));
        const double ratio = r.gbps / copy_gbps;
        const std::string name = std::string(mxfp4 ? "MXFP4" : "BF16") + " GEMV M=" + std::to_string(M);
        Row(name, sh.label, r.us, Fmt("%.0f GB/s = %.2f x copy", r.gbps, ratio));
        std::string key = std::string(mxfp4 ? "gemv_mxfp4" : "gemv_bf16") + "_M" + std::to_string(M) + "_" +
                          std::to_string(sh.N) + "x" + std::to_string(sh.K) + "_copy_ratio";
        ResultLine(key, ratio, "x");
      }
    }
  }

  // Decode sweep over a large weight set: every matrix once, batch 1.
  if (sweep_gb > 0) {
    const double per = 7168.0 * 7168 * (0.5 + 1.0 / 32);
    const int64_t count = std::max<int64_t>(1, int64_t(sweep_gb * 1e9 / per));
    KIMI_ASSIGN_OR_RETURN(GemvResult r, GemvSweep(b, true, 1, 7168, 7168, count, quick ? 2 : 3));
    Row("MXFP4 decode sweep M=1", Fmt("%.0f GB of 7168x7168 weights", count * per / 1e9), r.us * count,
        Fmt("%.0f GB/s = %.2f x copy", r.gbps, r.gbps / copy_gbps));
    ResultLine("decode_sweep_copy_ratio", r.gbps / copy_gbps, "x");
  }

  // Prefill GEMMs.
  for (bool mxfp4 : {false, true}) {
    const int64_t M = 2048, N = 7168, K = 7168;
    KIMI_ASSIGN_OR_RETURN(
        DeviceBuffer w, Filled(mxfp4 ? N * K / 2 : N * K * 2, mxfp4 ? kMxfp4Byte : kSmallFloatByte, stream));
    KIMI_ASSIGN_OR_RETURN(DeviceBuffer sc, Filled(N * K / 32, 120, stream));
    KIMI_ASSIGN_OR_RETURN(DeviceBuffer x, Filled(M * K * 4, kSmallFloatByte, stream));
    KIMI_ASSIGN_OR_RETURN(DeviceBuffer y, DeviceBuffer::Create(M * N * 4));
    auto gemm = [&]() {
      return mxfp4 ? MatmulMxfp4(x.as<float>(), K, w.as<uint8_t>(), sc.as<uint8_t>(), M, N, K, y.as<float>(),
                                 N, stream)
                   : MatmulBf16(x.as<float>(), K, w.as<uint16_t>(), M, N, K, y.as<float>(), N, stream);
    };
    KIMI_ASSIGN_OR_RETURN(double ms, b.Time(gemm, quick ? 2 : 3));
    const double tflops = 2.0 * M * N * K / (ms * 1e-3) / 1e12;
    Row(std::string(mxfp4 ? "MXFP4" : "BF16") + " prefill GEMM", "2048x7168x7168", ms * 1e3,
        peak > 0 ? Fmt("%.1f TFLOP/s = %.3f x peak", tflops, tflops / peak) : Fmt("%.1f TFLOP/s", tflops));
    ResultLine(std::string(mxfp4 ? "gemm_mxfp4" : "gemm_bf16") + "_tflops", tflops, "TFLOP/s");
    if (peak > 0)
      ResultLine(std::string(mxfp4 ? "gemm_mxfp4" : "gemm_bf16") + "_peak_ratio", tflops / peak, "x");
  }

  // The other ops, one decode step at K3's published shapes.
  const int64_t hidden = 7168, H = 96, dk = 128, dv = 128, R = 512, P = 64, E = 896, vocab = 163840;
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer f1,
                        Filled(64ull << 20, kSmallFloatByte, stream));  // scratch of small floats
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer f2, Filled(64ull << 20, kSmallFloatByte, stream));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer state, Filled(uint64_t(H) * dk * dv * 4, 0, stream));
  float* a = f1.as<float>();
  float* c = f2.as<float>();
  struct Op {
    const char* name;
    std::string shape;
    std::function<Status()> fn;
  };
  const int64_t ctx = 8192, page = 64;
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer kv_pool, Filled(uint64_t(ctx) * (R + P) * 4, kSmallFloatByte, stream));
  std::vector<int32_t> table(ctx / page);
  for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer dtable, DeviceBuffer::Create(table.size() * 4));
  KIMI_RETURN_IF_ERROR(dtable.CopyFromHost(table.data(), table.size() * 4));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer ids, DeviceBuffer::Create(1 << 20));
  kernels::MlaPagedCache cache{kv_pool.as<float>(), dtable.as<int32_t>(), page, R, P};
  auto kda_args = [&](int64_t T) {
    return kernels::KdaArgs{
        a, a, a, c, a, T, H, dk, dv, H * dk, H * dv, H, 0.088f, state.as<float>(), c + (8 << 20), H * dv};
  };
  const std::vector<Op> ops = {
      {"RmsNorm", "1x7168", [&] { return RmsNorm(a, a, 1, hidden, 1e-5f, c, stream); }},
      {"Situ", "3584x2 (one expert)", [&] { return Situ(a, a, 3584 * 2, 4.0f, 25.0f, c, stream); }},
      {"CausalConv1dSilu decode", "C=3x96x128, width 4",
       [&] {
         return CausalConv1dSilu(a, 3 * H * dk, 1, 3 * H * dk, a, a, 4, c, c + (1 << 20), 3 * H * dk, stream);
       }},
      {"KdaGate", "1x96x128", [&] { return KdaGate(a, a, a, 1, H, dk, -5.0f, c, stream); }},
      {"KdaRecurrent decode", "H=96, dk=dv=128, T=1", [&] { return KdaRecurrent(kda_args(1), stream); }},
      {"KdaRecurrent prefill", "H=96, dk=dv=128, T=512", [&] { return KdaRecurrent(kda_args(512), stream); }},
      {"MlaAbsorbed decode", "H=96, ctx 8192, R=512, P=64",
       [&] { return MlaAbsorbedAttention(a, a, 1, H, ctx - 1, cache, 0.07f, c, stream); }},
      {"TopKRoute decode", "E=896, k=16",
       [&] { return TopKRoute(a, a, 1, E, 16, true, 2.5f, ids.as<int32_t>(), c, stream); }},
      {"TopKRoute prefill", "T=512, E=896, k=16",
       [&] { return TopKRoute(a, a, 512, E, 16, true, 2.5f, ids.as<int32_t>(), c, stream); }},
      {"ArgmaxRows", "1x163840", [&] { return ArgmaxRows(a, 1, vocab, vocab, ids.as<int32_t>(), stream); }},
  };
  for (const Op& op : ops) {
    KIMI_ASSIGN_OR_RETURN(double ms, b.Time(op.fn, quick ? 5 : 20));
    Row(op.name, op.shape, ms * 1e3, "");
    std::string key = op.name;
    std::replace(key.begin(), key.end(), ' ', '_');
    ResultLine(key + "_us", ms * 1e3, "us");
  }
  return stream.Synchronize();
}

}  // namespace
}  // namespace kimi::gpu

int main(int argc, char** argv) {
  double sweep_gb = 0;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--sweep-gb") == 0 && i + 1 < argc) {
      sweep_gb = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: kimi-gpu-bench [--sweep-gb N] [--quick]\n");
      return 2;
    }
  }
  if (kimi::gpu::DeviceCount() == 0) {
    std::fprintf(stderr, "kimi-gpu-bench: no GPU device visible\n");
    return 2;
  }
  kimi::Status st = kimi::gpu::Run(sweep_gb, quick);
  if (!st.ok()) {
    std::fprintf(stderr, "kimi-gpu-bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
