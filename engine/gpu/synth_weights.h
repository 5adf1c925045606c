// Device fills of synthetic weights (the values of synth_fill.h): a benchmark model's matrices
// generated in device memory from a seed instead of read from a model directory.
// Pointers are device pointers; each call only queues work on `stream`. Owns nothing.
// Thread safety: reentrant; calls on one stream run in order.
#pragma once

#include <cstdint>

#include "gpu/gpu_device.h"
#include "kimi/status.h"

namespace kimi::gpu {

// w[i] = SynthBf16(seed, i, SynthBf16HalfWidth(fan_in)) for i < count.
Status FillSynthBf16(uint16_t* w, int64_t count, int64_t fan_in, uint64_t seed, const GpuStream& stream);
// The two halves of an MXFP4 matrix [rows, cols]: packed[i] = SynthPackedByte(seed, i) for
// i < rows·cols/2; every one of the rows·cols/32 scale bytes SynthMxfp4Scale(cols).
// Precondition: cols % 32 == 0.
Status FillSynthMxfp4Packed(uint8_t* packed, int64_t rows, int64_t cols, uint64_t seed, const GpuStream& stream);
Status FillSynthMxfp4Scales(uint8_t* scale, int64_t rows, int64_t cols, const GpuStream& stream);

}  // namespace kimi::gpu
