// The GPU device as the rest of the engine sees it, without any vendor type: the device count
// and properties, streams, an event timer, owned device buffers, and the one device arena the
// weights and activations are carved from. Implemented in gpu_device.cu over gpu_runtime.h, so
// the same calls work on CUDA and HIP.
//
// Memory policy: plain device allocations (cudaMalloc/hipMalloc), never managed memory. The
// engine makes one DeviceArena per device at start-up and hands out aligned slices of it; a
// DeviceBuffer is for tests and benchmarks that want an independent allocation.
//
// Every call that touches the runtime returns a Status; nothing throws.
// Thread safety: a GpuStream, a DeviceBuffer and a DeviceArena are used by one thread at a time
// (the runtime itself is thread-safe, these wrappers hold no locks). Work queued on one stream
// runs in order; distinct streams may overlap.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kimi/status.h"

namespace kimi::gpu {

// Number of visible devices; 0 (not an error) when there is no driver or no device.
int DeviceCount();

struct DeviceInfo {
  std::string name;
  std::string vendor;        // "cuda" or "hip": the runtime this build uses
  int major = 0, minor = 0;  // compute capability (CUDA) or gfx major/minor (HIP)
  int multiprocessors = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
};

// Makes `device` current for the calling thread and describes it.
Result<DeviceInfo> UseDevice(int device);

// An in-order queue of device work (a non-blocking stream).
class GpuStream {
 public:
  static Result<GpuStream> Create();
  GpuStream(GpuStream&& other) noexcept;
  GpuStream& operator=(GpuStream&& other) noexcept;
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;
  ~GpuStream();

  // Waits for everything queued so far; reports any asynchronous fault of that work.
  Status Synchronize() const;
  // The vendor stream handle (cudaStream_t / hipStream_t), for gpu_*.cu files only.
  void* native() const { return stream_; }

 private:
  explicit GpuStream(void* stream) : stream_(stream) {}
  void* stream_ = nullptr;
};

// Times work on a stream: Start(), queue work, Stop(), then ElapsedMs() waits for the stop.
class EventTimer {
 public:
  static Result<EventTimer> Create();
  EventTimer(EventTimer&& other) noexcept;
  EventTimer& operator=(EventTimer&&) = delete;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer();

  Status Start(const GpuStream& stream);
  Status Stop(const GpuStream& stream);
  Result<float> ElapsedMs() const;

 private:
  EventTimer(void* start, void* stop) : start_(start), stop_(stop) {}
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// One owned device allocation. Copies are synchronous (tests, set-up), or queued on a stream.
class DeviceBuffer {
 public:
  static Result<DeviceBuffer> Create(uint64_t bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  uint64_t bytes() const { return bytes_; }

  // Precondition: bytes <= this->bytes().
  Status CopyFromHost(const void* src, uint64_t bytes);
  Status CopyToHost(void* dst, uint64_t bytes) const;

 private:
  DeviceBuffer(void* data, uint64_t bytes) : data_(data), bytes_(bytes) {}
  void* data_ = nullptr;
  uint64_t bytes_ = 0;
};

// One large device allocation carved into aligned slices by bumping an offset; slices are never
// freed one by one (weights live as long as the model, activations are planned once).
// Reset() forgets every slice at once.
class DeviceArena {
 public:
  static constexpr uint64_t kAlignment = 256;  // enough for 16-byte vector loads and TMA

  // ResourceExhausted when the device cannot give `capacity` bytes.
  static Result<std::unique_ptr<DeviceArena>> Create(uint64_t capacity);
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena();

  // A slice of `bytes`, aligned to kAlignment; ResourceExhausted when it does not fit.
  Result<void*> Allocate(uint64_t bytes);
  void Reset() { used_ = 0; }

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }

 private:
  DeviceArena(void* base, uint64_t capacity) : base_(static_cast<char*>(base)), capacity_(capacity) {}
  char* base_;
  uint64_t capacity_;
  uint64_t used_ = 0;
};

// Copies `bytes` host→device (or device→host) on `stream` without waiting; the host memory
// must stay valid until the stream has run the copy.
Status CopyToDeviceAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream);
Status CopyToHostAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream);
Status CopyDeviceToDeviceAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream);
// Sets `bytes` bytes at dst to `value` (memset), queued on `stream`.
Status FillBytesAsync(void* dst, uint8_t value, uint64_t bytes, const GpuStream& stream);

}  // namespace kimi::gpu
