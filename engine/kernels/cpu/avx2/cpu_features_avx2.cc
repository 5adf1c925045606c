#include "kernels/cpu/avx2/cpu_features_avx2.h"

namespace kimi::kernels::avx2 {

bool CpuHasAvx512F() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

bool CpuHasAvx512Vnni() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return have;
}

}  // namespace kimi::kernels::avx2
