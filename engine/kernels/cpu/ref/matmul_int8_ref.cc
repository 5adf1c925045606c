// Reference int8-weight product: one dot product per output in double, the row's scale applied
// once at the end, the way the optimised kernels apply it.
#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {

void MatmulInt8(const float* x, int64_t ldx, const uint8_t* w, const float* w_scale, int64_t M, int64_t N, int64_t K,
                float* y, int64_t ldy) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* row = w + n * K;
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[m * ldx + k]) * (int(row[k]) - 128);
      y[m * ldy + n] = static_cast<float>(acc * w_scale[n]);
    }
  }
}

}  // namespace kimi::kernels::ref
