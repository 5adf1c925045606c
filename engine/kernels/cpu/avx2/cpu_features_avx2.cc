#include "kernels/cpu/avx2/cpu_features_avx2.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kimi::kernels::avx2 {
namespace {

// Linux (arch/x86/include/uapi/asm/prctl.h, asm/fpu/types.h): tile data is xstate component 18,
// and a process must ask for it before its first tile instruction, or that instruction faults.
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

bool OsGrantsTileData() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

bool CpuHasAvx512F() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

bool CpuHasAvx512Vnni() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return have;
}

bool CpuHasAvx512Bf16() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return have;
}

bool CpuHasAmxBf16() {
  // The permission is asked only where the CPU has the tiles: elsewhere the call fails anyway.
  static const bool have = CpuHasAvx512Bf16() && __builtin_cpu_supports("amx-tile") &&
                           __builtin_cpu_supports("amx-bf16") && OsGrantsTileData();
  return have;
}

}  // namespace kimi::kernels::avx2
