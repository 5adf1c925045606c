#include "kernels/cpu/kernel_test_util.h"

#include <cmath>

#include "kimi/dtype.h"
#if defined(__x86_64__)
#include "kernels/cpu/avx2/gemm_width_avx2.h"
#endif

namespace kimi::kernels::testing {

std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<uint16_t> RandomBf16(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<uint16_t> v(n);
  for (uint16_t& x : v) x = F32ToBf16(dist(rng));
  return v;
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = static_cast<uint8_t>(dist(rng));
  return v;
}

std::vector<const KernelTable*> OptimisedTables() {
  std::vector<const KernelTable*> tables;
  if (const KernelTable* t = Avx2Kernels()) tables.push_back(t);
  return tables;
}

void ForEachGemmWidth(const std::function<void(int bits)>& fn) {
#if defined(__x86_64__)
  if (Avx2Kernels() == nullptr) return;
  const int before = avx2::GemmRegisterWidth();
  for (int bits : {256, 512}) {
    if (bits == 512 && !cpu::HasAvx512F()) continue;
    avx2::SetGemmRegisterWidth(bits);
    fn(bits);
  }
  avx2::SetGemmRegisterWidth(before);
#else
  (void)fn;
#endif
}

::testing::AssertionResult AllClose(const float* got, const float* want, size_t n, float atol, float rtol) {
  size_t bad = 0;
  size_t first = n;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    double err = std::fabs(double(got[i]) - want[i]);
    double allowed = atol + rtol * std::fabs(want[i]);
    if (!(err <= allowed)) {  // NaN fails too
      if (first == n) first = i;
      ++bad;
    }
    if (allowed > 0) worst = std::max(worst, err / allowed);
  }
  if (bad == 0) return ::testing::AssertionSuccess() << "worst error/allowed " << worst;
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ; first at " << first
                                       << ": got " << got[first] << ", want " << want[first] << " (atol "
                                       << atol << ", rtol " << rtol << ")";
}

}  // namespace kimi::kernels::testing
