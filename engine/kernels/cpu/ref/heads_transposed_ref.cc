// Reference W_UK absorption product: per row and head, an axpy of each weight row into the
// output, in n order. Compiled with -ffp-contract=off (kernels/CMakeLists.txt) so every product
// is rounded before its add, the arithmetic the AVX2 kernel reproduces bit for bit.
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels::ref {

void HeadsTransposedBf16(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                         int64_t w_head_stride, int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                         int64_t ldy) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t h = 0; h < H; ++h) {
      const float* xh = x + m * ldx + h * x_head_stride;
      const uint16_t* wh = w + h * w_head_stride;
      float* out = y + m * ldy + h * n_out;
      for (int64_t c = 0; c < n_out; ++c) out[c] = 0.0f;
      for (int64_t n = 0; n < n_in; ++n) {
        const float a = xh[n];
        for (int64_t c = 0; c < n_out; ++c) out[c] += a * Bf16ToF32(wh[n * n_out + c]);
      }
    }
  }
}

}  // namespace kimi::kernels::ref
