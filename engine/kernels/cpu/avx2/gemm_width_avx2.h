// Which register width the blocked prefill GEMM (gemm_driver_avx2.h, behind GemmBf16 and
// GemmMxfp4) runs in: 512 where the CPU has AVX-512F, else 256. Both forms give the same bits;
// SetGemmRegisterWidth(256) lets tests and benchmarks run the 256-bit form on such a CPU.
// Thread safety: the setting is atomic; change it only while no GEMM runs.
#pragma once

#include "core/cpu_features.h"

namespace kimi::kernels::avx2 {

// 256 or 512: the width the GEMM runs in now.
int GemmRegisterWidth();
// 512 only where cpu::HasAvx512F() (a request for 512 elsewhere gives 256); 256 always works.
void SetGemmRegisterWidth(int bits);

}  // namespace kimi::kernels::avx2
