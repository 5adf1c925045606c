#include "core/cpu_features.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif
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

// CPUID leaf 7, sub-leaf 0, EDX bits 24 (AMX-TILE) and 22 (AMX-BF16), read directly: not every
// compiler's __builtin_cpu_supports knows the AMX names (clang 14, which `make fuzz` uses).
bool CpuHasAmxTileAndBf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kAmxBf16 = 1u << 22;
  constexpr unsigned kAmxTile = 1u << 24;
  return (edx & kAmxTile) != 0 && (edx & kAmxBf16) != 0;
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
  static const bool have = HasAvx512Bf16() && CpuHasAmxTileAndBf16() && OsGrantsTileData();
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
