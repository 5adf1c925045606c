// Builds for CPUs other than x86-64 have no AVX2 table; the reference is used.
#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels {
const KernelTable* Avx2Kernels() { return nullptr; }
}  // namespace kimi::kernels
