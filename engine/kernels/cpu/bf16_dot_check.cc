// CheckBf16DotGemm (kernel_table.h): a BF16 dot-product GEMM against ref::MatmulBf16Dot on
// this CPU, once, before the default may take it.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/illegal_instruction.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels {
namespace {

// Values in [-1, 1) from a fixed sequence (a 64-bit LCG's high bits): the same inputs every run.
class Sequence {
 public:
  explicit Sequence(uint64_t seed) : state_(seed) {}
  float Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int32_t>(state_ >> 40) - (1 << 23)) / float(1 << 23);
  }

 private:
  uint64_t state_;
};

}  // namespace

Status CheckBf16DotGemm(MatmulBf16Fn fn) {
  struct Shape {
    int64_t M, N, K;
  };
  // Rows past one 32-row tile pair and not a multiple of it, columns past one 128-column block
  // and not a multiple of 16, K past one 512-value block and not a multiple of 32.
  for (const Shape s : {Shape{33, 130, 300}, Shape{65, 40, 520}}) {
    Sequence values(uint64_t(s.M * 1000003 + s.N * 1009 + s.K));
    std::vector<float> x(s.M * s.K), want(s.M * s.N), got(s.M * s.N, std::nanf(""));
    std::vector<uint16_t> w(s.N * s.K);
    for (float& v : x) v = values.Next();
    for (uint16_t& v : w) v = F32ToBf16(values.Next());
    ref::MatmulBf16Dot(x.data(), s.K, w.data(), s.M, s.N, s.K, want.data(), s.N);
    const std::string shape = "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K);
    if (!RunUnlessIllegalInstruction([&] { fn(x.data(), s.K, w.data(), s.M, s.N, s.K, got.data(), s.N); })) {
      return Status::Unavailable(shape + ": the CPU refused an instruction (SIGILL)");
    }
    // The same products as the reference summed in another order (docs/kernels.md).
    const float atol = 1e-5f * std::sqrt(float(s.K)), rtol = 1e-5f;
    for (int64_t i = 0; i < s.M * s.N; ++i) {
      if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
        return Status::Internal(shape + ": y[" + std::to_string(i / s.N) + "][" + std::to_string(i % s.N) +
                                "] = " + std::to_string(got[i]) + " where the reference gives " +
                                std::to_string(want[i]));
      }
    }
  }
  return Status::OK();
}

}  // namespace kimi::kernels
