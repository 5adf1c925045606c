// The GPU device wrappers of gpu_device.h over the vendor names of gpu_runtime.h.
#include "gpu/gpu_device.h"

#include <algorithm>
#include <utility>

#include "gpu/gpu_runtime.h"

namespace kimi::gpu {
namespace {

gpuStream_t AsStream(void* s) {
  return static_cast<gpuStream_t>(s);
}
gpuEvent_t AsEvent(void* e) {
  return static_cast<gpuEvent_t>(e);
}

}  // namespace

int DeviceCount() {
  int n = 0;
  if (gpuGetDeviceCount(&n) != gpuSuccess) {
    (void)gpuGetLastError();  // clear the sticky "no driver" error for later calls
    return 0;
  }
  return n;
}

Result<DeviceInfo> UseDevice(int device) {
  KIMI_GPU_RETURN_IF_ERROR(gpuSetDevice(device));
  gpuDeviceProp_t prop;
  KIMI_GPU_RETURN_IF_ERROR(gpuGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.vendor = KIMI_GPU_VENDOR;
  info.major = prop.major;
  info.minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  size_t free_bytes = 0, total_bytes = 0;
  KIMI_GPU_RETURN_IF_ERROR(gpuMemGetInfo(&free_bytes, &total_bytes));
  info.free_bytes = free_bytes;
  info.total_bytes = total_bytes;
  return info;
}

// ---- GpuStream ----

Result<GpuStream> GpuStream::Create() {
  gpuStream_t s = nullptr;
  KIMI_GPU_RETURN_IF_ERROR(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking));
  return GpuStream(static_cast<void*>(s));
}

GpuStream::GpuStream(GpuStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

GpuStream& GpuStream::operator=(GpuStream&& other) noexcept {
  if (this != &other) {
    if (stream_) (void)gpuStreamDestroy(AsStream(stream_));
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

GpuStream::~GpuStream() {
  if (stream_) (void)gpuStreamDestroy(AsStream(stream_));
}

Status GpuStream::Synchronize() const {
  KIMI_GPU_RETURN_IF_ERROR(gpuStreamSynchronize(AsStream(stream_)));
  return Status::OK();
}

// ---- EventTimer ----

Result<EventTimer> EventTimer::Create() {
  gpuEvent_t start = nullptr, stop = nullptr;
  KIMI_GPU_RETURN_IF_ERROR(gpuEventCreate(&start));
  Status st = StatusFromGpu(gpuEventCreate(&stop), "gpuEventCreate(stop)");
  if (!st.ok()) {
    (void)gpuEventDestroy(start);
    return st;
  }
  return EventTimer(static_cast<void*>(start), static_cast<void*>(stop));
}

EventTimer::EventTimer(EventTimer&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)), stop_(std::exchange(other.stop_, nullptr)) {}

EventTimer::~EventTimer() {
  if (start_) (void)gpuEventDestroy(AsEvent(start_));
  if (stop_) (void)gpuEventDestroy(AsEvent(stop_));
}

Status EventTimer::Start(const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(gpuEventRecord(AsEvent(start_), AsStream(stream.native())));
  return Status::OK();
}

Status EventTimer::Stop(const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(gpuEventRecord(AsEvent(stop_), AsStream(stream.native())));
  return Status::OK();
}

Result<float> EventTimer::ElapsedMs() const {
  KIMI_GPU_RETURN_IF_ERROR(gpuEventSynchronize(AsEvent(stop_)));
  float ms = 0.0f;
  KIMI_GPU_RETURN_IF_ERROR(gpuEventElapsedTime(&ms, AsEvent(start_), AsEvent(stop_)));
  return ms;
}

// ---- DeviceBuffer ----

Result<DeviceBuffer> DeviceBuffer::Create(uint64_t bytes) {
  void* p = nullptr;
  KIMI_GPU_RETURN_IF_ERROR(gpuMalloc(&p, bytes == 0 ? 1 : bytes));
  return DeviceBuffer(p, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) (void)gpuFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) (void)gpuFree(data_);
}

Status DeviceBuffer::CopyFromHost(const void* src, uint64_t bytes) {
  if (bytes > bytes_)
    return Status::InvalidArgument("DeviceBuffer::CopyFromHost: more bytes than the buffer holds");
  KIMI_GPU_RETURN_IF_ERROR(gpuMemcpy(data_, src, bytes, gpuMemcpyHostToDevice));
  return Status::OK();
}

Status DeviceBuffer::CopyToHost(void* dst, uint64_t bytes) const {
  if (bytes > bytes_)
    return Status::InvalidArgument("DeviceBuffer::CopyToHost: more bytes than the buffer holds");
  KIMI_GPU_RETURN_IF_ERROR(gpuMemcpy(dst, data_, bytes, gpuMemcpyDeviceToHost));
  return Status::OK();
}

// ---- DeviceArena ----

Result<std::unique_ptr<DeviceArena>> DeviceArena::Create(uint64_t capacity) {
  void* base = nullptr;
  KIMI_GPU_RETURN_IF_ERROR(gpuMalloc(&base, capacity));
  return std::unique_ptr<DeviceArena>(new DeviceArena(base, capacity));
}

DeviceArena::~DeviceArena() {
  (void)gpuFree(base_);
}

Result<void*> DeviceArena::Allocate(uint64_t bytes) {
  const uint64_t start = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  if (start > capacity_ || bytes > capacity_ - start) {
    return Status::ResourceExhausted("device arena: " + std::to_string(bytes) + " bytes requested, " +
                                     std::to_string(capacity_ - std::min(start, capacity_)) + " left of " +
                                     std::to_string(capacity_));
  }
  used_ = start + bytes;
  return static_cast<void*>(base_ + start);
}

// ---- Asynchronous copies ----

Status CopyToDeviceAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, AsStream(stream.native())));
  return Status::OK();
}

Status CopyToHostAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, AsStream(stream.native())));
  return Status::OK();
}

Status CopyDeviceToDeviceAsync(void* dst, const void* src, uint64_t bytes, const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(
      gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToDevice, AsStream(stream.native())));
  return Status::OK();
}

Status FillBytesAsync(void* dst, uint8_t value, uint64_t bytes, const GpuStream& stream) {
  KIMI_GPU_RETURN_IF_ERROR(gpuMemsetAsync(dst, value, bytes, AsStream(stream.native())));
  return Status::OK();
}

}  // namespace kimi::gpu
