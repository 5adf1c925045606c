// Helpers shared by the kernel tests: seeded random inputs, the optimised tables to test, and
// a comparison that reports the worst element.
// Thread safety: test-only, single-threaded.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/kernel_table.h"

namespace kimi::kernels::testing {

std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<uint16_t> RandomBf16(size_t n, uint32_t seed, float scale = 1.0f);
// Packed nibbles of every code and scales around 2^0 (e in [120, 132]).
std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed, int lo = 0, int hi = 255);

// Every optimised table this CPU can run (empty when there is none: tests then skip).
std::vector<const KernelTable*> OptimisedTables();

// Runs fn(bits) once per register width the optimised GEMMs can run in on this CPU (256, and
// 512 where it has AVX-512F; gemm_width_avx2.h) with that width set, then restores the width
// it found. Runs nothing where there is no AVX2 table.
void ForEachGemmWidth(const std::function<void(int bits)>& fn);

// Passes when |got − want| <= atol + rtol·|want| everywhere; names the first failure.
::testing::AssertionResult AllClose(const float* got, const float* want, size_t n, float atol, float rtol);
inline ::testing::AssertionResult AllClose(const std::vector<float>& got, const std::vector<float>& want,
                                           float atol, float rtol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  return AllClose(got.data(), want.data(), got.size(), atol, rtol);
}

}  // namespace kimi::kernels::testing

#define KIMI_SKIP_WITHOUT_OPTIMISED_TABLES()                                     \
  do {                                                                           \
    if (::kimi::kernels::testing::OptimisedTables().empty())                     \
      GTEST_SKIP() << "this CPU has no optimised kernel table (no AVX2+FMA)";    \
  } while (0)
