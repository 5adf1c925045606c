// Measured limits of the machine the engine runs on, so benchmarks can state how close a
// kernel comes to them: memory read bandwidth (a STREAM-like sum over a buffer much larger
// than the caches), the FMA peak (independent register-only FMA chains, no memory) and the
// peaks of the BF16 dot-product instructions (vdpbf16ps, AMX tdpbf16ps) the same way.
// Used by bench/kimi-bench-kernels and by `kimi-engine bench`. Also the CPU clocks (thread and
// process) that benchmarks and the runtime's step statistics read.
//
// Owns: nothing beyond a call (the read buffer is allocated and freed inside the call).
// Thread safety: the functions may be called from any thread; running two at once, or while
// other work loads the machine, lowers what they measure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kimi {

class ThreadPool;

// Each figure comes twice: per second of wall time (what an idle machine delivers), and per
// second that the measuring threads actually ran (the slowest thread's CPU time), which stays
// meaningful on a machine shared with other work.
struct BandwidthResult {
  double gbytes_per_s = 0;      // best of `repeats` passes, 1 GB = 1e9 bytes
  double gbytes_per_cpu_s = 0;  // best of `repeats`, over the slowest thread's CPU time
  size_t bytes = 0;         // size of the buffer read per pass
  int threads = 0;
};

struct FmaPeakResult {
  double gflops = 0;          // 2 flops per FMA lane, all threads together
  double gflops_per_cpu_s = 0;  // the same over the slowest thread's CPU time
  int threads = 0;
  const char* isa = "";  // "avx512f-fma" (where the CPU has AVX-512F), "avx2-fma" or "scalar"
};

// Reads a buffer of `bytes` (rounded down to 4 KiB multiples) with every thread of `pool`
// (nullptr: the calling thread) `repeats` times after one warm-up pass.
BandwidthResult MeasureMemoryReadBandwidth(ThreadPool* pool, size_t bytes = size_t{512} << 20,
                                           int repeats = 5);

// CPU time consumed so far by the calling thread, in seconds.
double ThreadCpuSeconds();

// CPU time consumed so far by the whole process (every thread), in seconds.
double ProcessCpuSeconds();

// Runs a register-only FMA loop on every thread of `pool` for about `seconds`.
FmaPeakResult MeasureFmaPeak(ThreadPool* pool, double seconds = 0.3);

// The same for the BF16 dot-product instructions the prefill GEMM can run on (kernel_table.h:
// avx512bf16, amx), counting 2 flops per BF16 product: vdpbf16ps on 512-bit registers (isa
// "avx512bf16-vdpbf16ps"; call only where cpu::HasAvx512Bf16()), and AMX tdpbf16ps
// on four independent tiles (isa "amx-tdpbf16ps"; call only where cpu::HasAmxBf16(),
// which also obtains the OS's tile permission). The CPU's features are read by the caller.
FmaPeakResult MeasureBf16DotPeak(ThreadPool* pool, double seconds = 0.3);
FmaPeakResult MeasureAmxBf16Peak(ThreadPool* pool, double seconds = 0.3);

}  // namespace kimi
