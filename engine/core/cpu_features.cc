#include "core/cpu_features.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kimi::cpu {

#if defined(__x86_64__) || defined(_M_X64)
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

bool HasAvx2Fma() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}

bool HasAvx512F() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

bool HasAvx512Vnni() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return have;
}

bool HasAvx512Bf16() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return have;
}

bool HasAmxBf16() {
  // The permission is asked only where the CPU has the tiles: elsewhere the call fails anyway.
  static const bool have = HasAvx512Bf16() && __builtin_cpu_supports("amx-tile") &&
                           __builtin_cpu_supports("amx-bf16") && OsGrantsTileData();
  return have;
}

#else
bool HasAvx2Fma() { return false; }
bool HasAvx512F() { return false; }
bool HasAvx512Vnni() { return false; }
bool HasAvx512Bf16() { return false; }
bool HasAmxBf16() { return false; }
#endif

}  // namespace kimi::cpu
