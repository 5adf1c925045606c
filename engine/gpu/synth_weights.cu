// Device fills of synthetic weights (synth_weights.h): one thread per output element, a
// grid-stride loop, the arithmetic of synth_fill.h.
#include "gpu/synth_weights.h"

#include "gpu/device_common.cuh"
#include "gpu/synth_fill.h"

namespace kimi::gpu {
namespace {

__global__ void FillBf16Kernel(uint16_t* w, int64_t count, float half_width, uint64_t seed) {
  KIMI_GRID_STRIDE_LOOP(i, count) w[i] = SynthBf16(seed, uint64_t(i), half_width);
}

__global__ void FillBytesKernel(uint8_t* p, int64_t count, uint64_t seed) {
  KIMI_GRID_STRIDE_LOOP(i, count) p[i] = SynthPackedByte(seed, uint64_t(i));
}

}  // namespace

Status FillSynthBf16(uint16_t* w, int64_t count, int64_t fan_in, uint64_t seed, const GpuStream& stream) {
  if (count < 0 || fan_in < 1) return Status::InvalidArgument("FillSynthBf16: bad shape");
  if (count == 0) return Status::OK();
  FillBf16Kernel<<<detail::ElementGrid(count), detail::kBlockThreads, 0, detail::Native(stream)>>>(
      w, count, SynthBf16HalfWidth(fan_in), seed);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("FillSynthBf16");
  return Status::OK();
}

Status FillSynthMxfp4Packed(uint8_t* packed, int64_t rows, int64_t cols, uint64_t seed, const GpuStream& stream) {
  if (rows < 0 || cols < 32 || cols % 32 != 0) return Status::InvalidArgument("FillSynthMxfp4Packed: bad shape");
  if (rows == 0) return Status::OK();
  const int64_t bytes = rows * cols / 2;
  FillBytesKernel<<<detail::ElementGrid(bytes), detail::kBlockThreads, 0, detail::Native(stream)>>>(packed, bytes,
                                                                                                    seed);
  KIMI_GPU_RETURN_IF_LAUNCH_FAILED("FillSynthMxfp4Packed");
  return Status::OK();
}

Status FillSynthMxfp4Scales(uint8_t* scale, int64_t rows, int64_t cols, const GpuStream& stream) {
  if (rows < 0 || cols < 32 || cols % 32 != 0) return Status::InvalidArgument("FillSynthMxfp4Scales: bad shape");
  return FillBytesAsync(scale, SynthMxfp4Scale(cols), uint64_t(rows * cols / 32), stream);
}

}  // namespace kimi::gpu
