// What the CPU offers beyond AVX2 + FMA, for the kernels that have a 512-bit form beside their
// 256-bit one inside the AVX2 table (the BF16 batch GEMV, the prefill GEMM, the MXFP4 decode
// GEMV) and for the BF16 dot-product tables (kernel_table.h: avx512bf16, amx). Each answer is
// read from CPUID (and, for AMX, asked of the OS) once per process.
// Thread safety: safe from any thread.
#pragma once

namespace kimi::kernels::avx2 {

// AVX-512 Foundation: 512-bit float arithmetic.
bool CpuHasAvx512F();
// AVX-512 F, BW, VL and VNNI: 512-bit integer multiply-adds (vpdpwssd).
bool CpuHasAvx512Vnni();
// AVX-512 F, BW, VL and BF16: BF16 pair dot products into fp32 (vdpbf16ps) and the
// round-to-nearest-even conversion to BF16 (vcvtne2ps2bf16).
bool CpuHasAvx512Bf16();
// AMX-TILE and AMX-BF16 (tdpbf16ps) with AVX-512 BF16 beside them, and Linux's permission to use
// the tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), asked once for the
// whole process). False when either the CPU or the kernel says no.
bool CpuHasAmxBf16();

}  // namespace kimi::kernels::avx2
