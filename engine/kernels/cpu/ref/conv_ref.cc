// Reference depthwise causal convolution + SiLU over a window of the state and the new tokens.
#include <cmath>
#include <vector>

#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {

void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, int64_t ld_state, float* out,
                      int64_t ldo) {
  const int hist = width - 1;
  // window[j] for j < hist is state row j; window[hist + t] is token t.
  auto input = [&](int64_t j, int64_t c) -> float {
    return j < hist ? state[j * ld_state + c] : x[(j - hist) * ldx + c];
  };
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < C; ++c) {
      float acc = bias ? bias[c] : 0.0f;
      for (int j = 0; j < width; ++j) acc += w[c * width + j] * input(t + j, c);
      out[t * ldo + c] = acc / (1.0f + std::exp(-acc));
    }
  }
  // The new state is the last `hist` entries of the window [state | x].
  std::vector<float> tail(static_cast<size_t>(hist * C));
  for (int j = 0; j < hist; ++j)
    for (int64_t c = 0; c < C; ++c) tail[j * C + c] = input(T + j, c);
  for (int j = 0; j < hist; ++j)
    for (int64_t c = 0; c < C; ++c) state[j * ld_state + c] = tail[j * C + c];
}

}  // namespace kimi::kernels::ref
