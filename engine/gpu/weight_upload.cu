// Weight upload through two pinned staging buffers (see weight_upload.h).
#include "gpu/weight_upload.h"

#include <algorithm>
#include <cstring>

#include "gpu/gpu_runtime.h"

namespace kimi::gpu {
namespace {

// The two pinned buffers and the events that say when the device has finished reading each.
class StagingPair {
 public:
  ~StagingPair() {
    for (int i = 0; i < 2; ++i) {
      if (done_[i]) (void)gpuEventDestroy(done_[i]);
      if (host_[i]) (void)gpuFreeHost(host_[i]);
    }
  }
  Status Init(uint64_t bytes) {
    for (int i = 0; i < 2; ++i) {
      KIMI_GPU_RETURN_IF_ERROR(gpuMallocHost(&host_[i], bytes));
      KIMI_GPU_RETURN_IF_ERROR(gpuEventCreate(&done_[i]));  // never recorded: waiting on it returns at once
    }
    return Status::OK();
  }
  void* host(int i) const { return host_[i]; }
  gpuEvent_t done(int i) const { return done_[i]; }

 private:
  void* host_[2] = {nullptr, nullptr};
  gpuEvent_t done_[2] = {nullptr, nullptr};
};

}  // namespace

Result<std::vector<DeviceTensor>> UploadTensors(std::span<const TensorView* const> views, DeviceArena& arena,
                                                const GpuStream& stream, const UploadProgress& progress,
                                                uint64_t chunk_bytes) {
  if (chunk_bytes == 0) return Status::InvalidArgument("UploadTensors: chunk_bytes must be positive");
  uint64_t total = 0;
  for (const TensorView* v : views) total += v->bytes;

  StagingPair staging;
  KIMI_RETURN_IF_ERROR(staging.Init(chunk_bytes));
  gpuStream_t s = static_cast<gpuStream_t>(stream.native());

  std::vector<DeviceTensor> out;
  out.reserve(views.size());
  uint64_t done = 0;
  int turn = 0;
  for (const TensorView* v : views) {
    KIMI_ASSIGN_OR_RETURN(void* dst, arena.Allocate(v->bytes));
    const char* src = static_cast<const char*>(v->data);
    for (uint64_t off = 0; off < v->bytes; off += chunk_bytes) {
      const uint64_t n = std::min(chunk_bytes, v->bytes - off);
      // The device must have finished reading this buffer's previous chunk before we refill it.
      KIMI_GPU_RETURN_IF_ERROR(gpuEventSynchronize(staging.done(turn)));
      std::memcpy(staging.host(turn), src + off, n);
      KIMI_GPU_RETURN_IF_ERROR(
          gpuMemcpyAsync(static_cast<char*>(dst) + off, staging.host(turn), n, gpuMemcpyHostToDevice, s));
      KIMI_GPU_RETURN_IF_ERROR(gpuEventRecord(staging.done(turn), s));
      turn ^= 1;
      done += n;
      if (progress) progress(done, total);
    }
    out.push_back(DeviceTensor{v->name, v->dtype, v->shape, dst, v->bytes});
  }
  KIMI_RETURN_IF_ERROR(stream.Synchronize());
  if (progress && total == 0) progress(0, 0);
  return out;
}

}  // namespace kimi::gpu
