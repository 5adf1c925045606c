// What the CPU offers, read in this one place for the whole engine: the kernel tables
// (kernels/cpu/kernel_table.h: avx2, avx512bf16, amx), the 512-bit forms inside the AVX2
// table (the BF16 batch GEMV, the prefill GEMMs, the MXFP4 and int8 decode GEMVs) and the
// machine limits that the benchmarks compare against (core/machine_limits.h). Each answer is
// read from CPUID (and, for AMX, asked of the OS) once per process; every answer is false on
// CPUs other than x86-64.
// Thread safety: safe from any thread.
#pragma once

#include <cstdint>

namespace kimi::cpu {

// AVX2 and FMA3: the AVX2 kernel table.
bool HasAvx2Fma();
// AVX-512 Foundation: 512-bit float arithmetic.
bool HasAvx512F();
// AVX-512 F, BW, VL and VNNI: 512-bit integer multiply-adds (vpdpwssd).
bool HasAvx512Vnni();
// AVX-512 F, BW, VL and BF16: BF16 pair dot products into fp32 (vdpbf16ps) and the
// round-to-nearest-even conversion to BF16 (vcvtne2ps2bf16).
bool HasAvx512Bf16();
// AMX-TILE and AMX-BF16 (tdpbf16ps) with AVX-512 BF16 beside them, and Linux's permission to use
// the tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), asked once for the
// whole process). False when either the CPU or the kernel says no.
bool HasAmxBf16();

// The LDTILECFG operand (palette 1) with all eight tiles at their largest, 16 rows of 64 bytes:
// the shape of every tile the AMX GEMM (kernels/cpu/avx2/matmul_bf16_dot_avx512.cc) and the AMX
// peak loop (core/machine_limits.cc) use.
struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(AmxTileConfig) == 64);

}  // namespace kimi::cpu
