// Depthwise causal conv + SiLU with AVX2. The weights are transposed once per call to
// [width][C] so taps for 8 channels are one load; the work runs over tiles of 256 channels
// and, inside a tile, token by token, so x and out are read and written in contiguous
// 1 KiB runs (walking one channel block down all tokens instead strides by a whole row per
// load and defeats the prefetcher: measured 5× slower at C = 12288).
#include <algorithm>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kTile = 256;

// Channels [c, c + lanes), lanes <= 8, token t.
inline __m256 ConvAt(const float* x, int64_t ldx, int64_t t, int64_t c, int64_t lanes, const float* taps_t,
                     int64_t C, const float* bias, int width, const float* state, int64_t ld_state) {
  const int hist = width - 1;
  auto load = [&](const float* p) { return lanes == 8 ? _mm256_loadu_ps(p) : LoadPartial(p, lanes, 0.0f); };
  __m256 acc = bias ? load(bias + c) : _mm256_setzero_ps();
  for (int j = 0; j < width; ++j) {
    const int64_t p = t + j;  // window position: < hist is state row p, else token p − hist
    __m256 in = p < hist ? load(state + p * ld_state + c) : load(x + (p - hist) * ldx + c);
    acc = _mm256_fmadd_ps(load(taps_t + j * C + c), in, acc);
  }
  return acc;
}

}  // namespace

void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, int64_t ld_state, float* out,
                      int64_t ldo) {
  float* taps = ThreadScratchArray<float>(ScratchSlot::kA, width * C);
  for (int64_t c = 0; c < C; ++c)
    for (int j = 0; j < width; ++j) taps[j * C + c] = w[c * width + j];
  const int hist = width - 1;
  for (int64_t c0 = 0; c0 < C; c0 += kTile) {
    const int64_t c1 = std::min(C, c0 + kTile);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t c = c0; c < c1; c += 8) {
        const int64_t lanes = std::min<int64_t>(8, c1 - c);
        __m256 acc = ConvAt(x, ldx, t, c, lanes, taps, C, bias, width, state, ld_state);
        __m256 y = _mm256_mul_ps(acc, Sigmoid8(acc));
        if (lanes == 8) _mm256_storeu_ps(out + t * ldo + c, y);
        else StorePartial(out + t * ldo + c, lanes, y);
      }
    }
    // New state row j = window position T + j; ascending j only reads rows at or after j.
    for (int j = 0; j < hist; ++j) {
      const int64_t p = T + j;
      for (int64_t c = c0; c < c1; ++c)
        state[j * ld_state + c] = p < hist ? state[p * ld_state + c] : x[(p - hist) * ldx + c];
    }
  }
}

}  // namespace kimi::kernels::avx2
