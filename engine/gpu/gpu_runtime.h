// The vendor header of the GPU backend: one spelling (gpu*) for the CUDA and HIP runtime APIs,
// so every .cu file of engine/gpu/ compiles unchanged with nvcc and with hipcc. Include it only
// from .cu files; the headers other code includes (gpu_device.h, gpu_ops.h) name no vendor type.
//
// Also here: the turn of a runtime error code into the project's Status, and the few device
// helpers that differ between vendors (warp width, warp shuffles).
// Owns: nothing. Thread safety: macros and pure inline functions.
#pragma once

#include <string>

#include "kimi/status.h"

#if defined(__HIPCC__) || defined(KIMI_GPU_HIP)
#include <hip/hip_runtime.h>
#define KIMI_GPU_VENDOR "hip"
#define KIMI_GPU_API(name) hip##name
using gpuDeviceProp_t = hipDeviceProp_t;
#define gpuMallocHost hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuErrorOutOfMemory hipErrorOutOfMemory
#else
#include <cuda_runtime.h>
#define KIMI_GPU_VENDOR "cuda"
#define KIMI_GPU_API(name) cuda##name
using gpuDeviceProp_t = cudaDeviceProp;
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuErrorOutOfMemory cudaErrorMemoryAllocation
#endif

// The names that differ only in their prefix.
using gpuError_t = KIMI_GPU_API(Error_t);
using gpuStream_t = KIMI_GPU_API(Stream_t);
using gpuEvent_t = KIMI_GPU_API(Event_t);
#define gpuSuccess KIMI_GPU_API(Success)
#define gpuGetErrorString KIMI_GPU_API(GetErrorString)
#define gpuGetLastError KIMI_GPU_API(GetLastError)
#define gpuGetDeviceCount KIMI_GPU_API(GetDeviceCount)
#define gpuSetDevice KIMI_GPU_API(SetDevice)
#define gpuGetDeviceProperties KIMI_GPU_API(GetDeviceProperties)
#define gpuMemGetInfo KIMI_GPU_API(MemGetInfo)
#define gpuMalloc KIMI_GPU_API(Malloc)
#define gpuFree KIMI_GPU_API(Free)
#define gpuMemcpy KIMI_GPU_API(Memcpy)
#define gpuMemcpyAsync KIMI_GPU_API(MemcpyAsync)
#define gpuMemsetAsync KIMI_GPU_API(MemsetAsync)
#define gpuMemcpyHostToDevice KIMI_GPU_API(MemcpyHostToDevice)
#define gpuMemcpyDeviceToHost KIMI_GPU_API(MemcpyDeviceToHost)
#define gpuMemcpyDeviceToDevice KIMI_GPU_API(MemcpyDeviceToDevice)
#define gpuStreamCreateWithFlags KIMI_GPU_API(StreamCreateWithFlags)
#define gpuStreamNonBlocking KIMI_GPU_API(StreamNonBlocking)
#define gpuStreamSynchronize KIMI_GPU_API(StreamSynchronize)
#define gpuStreamDestroy KIMI_GPU_API(StreamDestroy)
#define gpuEventCreate KIMI_GPU_API(EventCreate)
#define gpuEventRecord KIMI_GPU_API(EventRecord)
#define gpuEventSynchronize KIMI_GPU_API(EventSynchronize)
#define gpuEventElapsedTime KIMI_GPU_API(EventElapsedTime)
#define gpuEventDestroy KIMI_GPU_API(EventDestroy)

// Lanes per warp (wavefront). CDNA (MI200/MI300/MI350) runs wave64; the HIP build targets CDNA
// only, so a wave32 RDNA card is not supported by these kernels.
#if defined(__HIPCC__) || defined(KIMI_GPU_HIP)
#define KIMI_WARP_SIZE 64
#define KIMI_SHFL_XOR(value, lane_mask) __shfl_xor((value), (lane_mask))
#else
#define KIMI_WARP_SIZE 32
#define KIMI_SHFL_XOR(value, lane_mask) __shfl_xor_sync(0xffffffffu, (value), (lane_mask))
#endif

namespace kimi::gpu {

// Status of a runtime call: OK, or Internal naming the call and the runtime's message.
// Out-of-memory maps to ResourceExhausted so callers can tell "too big" from "broken".
inline Status StatusFromGpu(gpuError_t err, const char* what) {
  if (err == gpuSuccess) return Status::OK();
  std::string msg = std::string(what) + ": " + gpuGetErrorString(err);
  if (err == gpuErrorOutOfMemory) return Status::ResourceExhausted(msg);
  return Status::Internal(msg);
}

}  // namespace kimi::gpu

// Every runtime call goes through this: an error returns a Status naming the call.
#define KIMI_GPU_RETURN_IF_ERROR(call) KIMI_RETURN_IF_ERROR(::kimi::gpu::StatusFromGpu((call), #call))

// After a kernel launch: a bad configuration or an earlier asynchronous fault shows up here.
#define KIMI_GPU_RETURN_IF_LAUNCH_FAILED(kernel_name) \
  KIMI_RETURN_IF_ERROR(::kimi::gpu::StatusFromGpu(gpuGetLastError(), "launch " kernel_name))
