// Upload of weights from the memory-mapped safetensors files to device memory.
//
// Each tensor gets its own aligned slice of the DeviceArena. Bytes travel through two pinned
// host staging buffers in turn: while the device copies one chunk, the host reads the next one
// out of the mapping (which is what faults the file's pages in), so a cold upload runs at the
// slower of disk and PCIe instead of their sum. Progress is reported after every chunk.
//
// Owns: the staging buffers, for the duration of one call. The returned DeviceTensors point into
// the arena and live as long as it does (and until its Reset()).
// Thread safety: one call at a time per arena and stream.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gpu/gpu_device.h"
#include "kimi/safetensors.h"

namespace kimi::gpu {

struct DeviceTensor {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;
  void* data = nullptr;  // device memory, DeviceArena::kAlignment-aligned
  uint64_t bytes = 0;
};

// Called with (bytes copied so far, bytes in all); the last call has done == total.
using UploadProgress = std::function<void(uint64_t done, uint64_t total)>;

// Copies every view to the device; returns when the last byte has arrived. ResourceExhausted
// when the arena is too small (nothing is rolled back: Reset() the arena to retry).
// `chunk_bytes` is the size of each of the two staging buffers.
Result<std::vector<DeviceTensor>> UploadTensors(std::span<const TensorView* const> views, DeviceArena& arena,
                                                const GpuStream& stream, const UploadProgress& progress,
                                                uint64_t chunk_bytes = 32ull << 20);

}  // namespace kimi::gpu
