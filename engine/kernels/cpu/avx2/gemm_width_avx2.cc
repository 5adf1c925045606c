// The GEMM's register width: the CPU's features once, then a process-wide setting.
#include "kernels/cpu/avx2/gemm_width_avx2.h"

#include <atomic>

namespace kimi::kernels::avx2 {
namespace {

std::atomic<int>& Width() {
  static std::atomic<int> width{cpu::HasAvx512F() ? 512 : 256};
  return width;
}

}  // namespace

int GemmRegisterWidth() { return Width().load(std::memory_order_relaxed); }

void SetGemmRegisterWidth(int bits) {
  Width().store(bits == 512 && cpu::HasAvx512F() ? 512 : 256, std::memory_order_relaxed);
}

}  // namespace kimi::kernels::avx2
