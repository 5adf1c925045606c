// The card's BF16 matrix-product peak as the vendor library reaches it (cuBLAS, BF16 inputs,
// fp32 accumulation): the yardstick the benchmark divides our prefill TFLOP/s by.
// Owns: its buffers and library handle for the duration of one call.
// Thread safety: one call at a time per device.
#pragma once

#include "gpu/gpu_device.h"
#include "kimi/status.h"

namespace kimi::gpu {

// Best TFLOP/s over `reps` timed n×n×n products (after one warm-up). Unimplemented on HIP builds.
Result<double> MeasureBf16MatmulPeakTflops(int n, int reps, const GpuStream& stream);

}  // namespace kimi::gpu
