// Depthwise causal conv + SiLU with AVX2: eight channels per vector, their `width` taps held
// in registers across all tokens.
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int kMaxWidth = 8;

// Channels [c, c + lanes) with lanes <= 8.
void ConvChannels(const float* x, int64_t ldx, int64_t T, int64_t c, int64_t lanes, const float* w,
                  const float* bias, int width, float* state, int64_t ld_state, float* out, int64_t ldo) {
  const int hist = width - 1;
  auto load = [&](const float* p) { return lanes == 8 ? _mm256_loadu_ps(p) : LoadPartial(p, lanes, 0.0f); };
  auto store = [&](float* p, __m256 v) {
    if (lanes == 8) _mm256_storeu_ps(p, v);
    else StorePartial(p, lanes, v);
  };
  __m256 taps[kMaxWidth];
  for (int j = 0; j < width; ++j) {
    alignas(32) float buf[8] = {};
    for (int64_t l = 0; l < lanes; ++l) buf[l] = w[(c + l) * width + j];
    taps[j] = _mm256_load_ps(buf);
  }
  const __m256 b = bias ? load(bias + c) : _mm256_setzero_ps();
  // window position p: p < hist is state row p, else token p − hist.
  auto input = [&](int64_t p) { return p < hist ? load(state + p * ld_state + c) : load(x + (p - hist) * ldx + c); };
  for (int64_t t = 0; t < T; ++t) {
    __m256 acc = b;
    for (int j = 0; j < width; ++j) acc = _mm256_fmadd_ps(taps[j], input(t + j), acc);
    store(out + t * ldo + c, _mm256_mul_ps(acc, Sigmoid8(acc)));
  }
  // New state row j = window position T + j; ascending j only reads rows at or after j.
  for (int j = 0; j < hist; ++j) store(state + j * ld_state + c, input(T + j));
}

}  // namespace

void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, int64_t ld_state, float* out,
                      int64_t ldo) {
  for (int64_t c = 0; c < C; c += 8)
    ConvChannels(x, ldx, T, c, C - c < 8 ? C - c : 8, w, bias, width, state, ld_state, out, ldo);
}

}  // namespace kimi::kernels::avx2
