// BF16 matrix-product peak through cuBLAS (peak_matmul.h).
#include "gpu/peak_matmul.h"

#include <algorithm>
#include <string>

#include "gpu/gpu_runtime.h"

#if !defined(__HIPCC__)
#include <cublas_v2.h>
#endif

namespace kimi::gpu {

#if defined(__HIPCC__)

Result<double> MeasureBf16MatmulPeakTflops(int, int, const GpuStream&) {
  return Status::Unimplemented("BF16 peak: hipBLAS is not wired into the HIP build");
}

#else

namespace {

Status BlasStatus(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return Status::Internal(std::string(what) + ": cuBLAS status " + std::to_string(int(st)));
}

class BlasHandle {
 public:
  ~BlasHandle() {
    if (handle_) cublasDestroy(handle_);
  }
  Status Init(gpuStream_t s) {
    KIMI_RETURN_IF_ERROR(BlasStatus(cublasCreate(&handle_), "cublasCreate"));
    return BlasStatus(cublasSetStream(handle_, s), "cublasSetStream");
  }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

Result<double> MeasureBf16MatmulPeakTflops(int n, int reps, const GpuStream& stream) {
  const uint64_t elems = uint64_t(n) * n;
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer a, DeviceBuffer::Create(elems * 2));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Create(elems * 2));
  KIMI_ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Create(elems * 4));
  gpuStream_t s = static_cast<gpuStream_t>(stream.native());
  // Small finite values (0x3c00 is bf16 0.0078125) so no product overflows.
  KIMI_GPU_RETURN_IF_ERROR(gpuMemsetAsync(a.data(), 0x3c, elems * 2, s));
  KIMI_GPU_RETURN_IF_ERROR(gpuMemsetAsync(b.data(), 0x3c, elems * 2, s));
  BlasHandle blas;
  KIMI_RETURN_IF_ERROR(blas.Init(s));
  const float alpha = 1.0f, beta = 0.0f;
  auto product = [&]() {
    return BlasStatus(cublasGemmEx(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a.data(),
                                   CUDA_R_16BF, n, b.data(), CUDA_R_16BF, n, &beta, c.data(), CUDA_R_32F, n,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmEx");
  };
  KIMI_RETURN_IF_ERROR(product());  // warm-up: picks the algorithm
  KIMI_ASSIGN_OR_RETURN(EventTimer timer, EventTimer::Create());
  double best_ms = 1e30;
  for (int r = 0; r < reps; ++r) {
    KIMI_RETURN_IF_ERROR(timer.Start(stream));
    KIMI_RETURN_IF_ERROR(product());
    KIMI_RETURN_IF_ERROR(timer.Stop(stream));
    KIMI_ASSIGN_OR_RETURN(float ms, timer.ElapsedMs());
    best_ms = std::min(best_ms, double(ms));
  }
  return 2.0 * double(n) * n * n / (best_ms * 1e-3) / 1e12;
}

#endif

}  // namespace kimi::gpu
