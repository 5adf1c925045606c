// Builds for CPUs other than x86-64 have no AVX2 (or BF16 dot-product) table; the reference is used.
#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels {
const KernelTable* Avx2Kernels() { return nullptr; }
const KernelTable* Avx512Bf16Kernels() { return nullptr; }
const KernelTable* AmxKernels() { return nullptr; }
}  // namespace kimi::kernels
