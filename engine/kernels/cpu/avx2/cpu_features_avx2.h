// What the CPU offers beyond AVX2 + FMA, for the kernels that have a 512-bit form beside their
// 256-bit one inside the AVX2 table (the BF16 batch GEMV, the prefill GEMM, the MXFP4 decode
// GEMV). Each answer is read from CPUID once per process.
// Thread safety: safe from any thread.
#pragma once

namespace kimi::kernels::avx2 {

// AVX-512 Foundation: 512-bit float arithmetic.
bool CpuHasAvx512F();
// AVX-512 F, BW, VL and VNNI: 512-bit integer multiply-adds (vpdpwssd).
bool CpuHasAvx512Vnni();

}  // namespace kimi::kernels::avx2
