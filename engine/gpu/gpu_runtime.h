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
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp_t = hipDeviceProp_t;
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamDestroy hipStreamDestroy
#define gpuEventCreate hipEventCreate
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy
#else
#include <cuda_runtime.h>
#define KIMI_GPU_VENDOR "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp_t = cudaDeviceProp;
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamDestroy cudaStreamDestroy
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy
#endif

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
#if defined(__HIPCC__) || defined(KIMI_GPU_HIP)
  if (err == hipErrorOutOfMemory) return Status::ResourceExhausted(msg);
#else
  if (err == cudaErrorMemoryAllocation) return Status::ResourceExhausted(msg);
#endif
  return Status::Internal(msg);
}

}  // namespace kimi::gpu

// Every runtime call goes through this: an error returns a Status naming the call.
#define KIMI_GPU_RETURN_IF_ERROR(call) KIMI_RETURN_IF_ERROR(::kimi::gpu::StatusFromGpu((call), #call))

// After a kernel launch: a bad configuration or an earlier asynchronous fault shows up here.
#define KIMI_GPU_RETURN_IF_LAUNCH_FAILED(kernel_name) \
  KIMI_RETURN_IF_ERROR(::kimi::gpu::StatusFromGpu(gpuGetLastError(), "launch " kernel_name))
