// Depthwise causal conv + SiLU with AVX2. The taps of 8 channels for one window position must
// be one vector. For a run of tokens (prefill) the weights are transposed once per call to
// [width][C]; for one or two tokens (decode, which calls this once per sequence and q/k/v) that
// transposition would cost more than the conv itself, so at width 4 (K3's) each block of 8
// channels transposes its 8 × 4 taps in registers instead (same taps, same FMAs: the same bits).
// The work runs over tiles of 256 channels and, inside a tile, token by token, so x and out are
// read and written in contiguous 1 KiB runs (walking one channel block down all tokens instead
// strides by a whole row per load and defeats the prefetcher: measured 5× slower at C = 12288).
#include <algorithm>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kTile = 256;
// Up to this many tokens a call at width 4 takes its taps straight from the checkpoint layout.
constexpr int64_t kDirectTapsMaxT = 2;

// Channels [c, c + lanes), lanes <= 8, token t; tap[j] holds window position j's taps.
inline __m256 ConvAt(const float* x, int64_t ldx, int64_t t, int64_t c, int64_t lanes, const __m256* tap,
                     const float* bias, int width, const float* state, int64_t ld_state) {
  const int hist = width - 1;
  auto load = [&](const float* p) { return lanes == 8 ? _mm256_loadu_ps(p) : LoadPartial(p, lanes, 0.0f); };
  __m256 acc = bias ? load(bias + c) : _mm256_setzero_ps();
  for (int j = 0; j < width; ++j) {
    const int64_t p = t + j;  // window position: < hist is state row p, else token p − hist
    __m256 in = p < hist ? load(state + p * ld_state + c) : load(x + (p - hist) * ldx + c);
    acc = _mm256_fmadd_ps(tap[j], in, acc);
  }
  return acc;
}

// The 4 taps of 8 channels from w[c][4] (32 consecutive floats): an 8 × 4 transpose.
inline void Taps4(const float* w, __m256* tap) {
  const __m256 v0 = _mm256_loadu_ps(w), v1 = _mm256_loadu_ps(w + 8);
  const __m256 v2 = _mm256_loadu_ps(w + 16), v3 = _mm256_loadu_ps(w + 24);
  const __m256 a0 = _mm256_permute2f128_ps(v0, v2, 0x20);  // channels 0 | 4, taps 0–3
  const __m256 a1 = _mm256_permute2f128_ps(v0, v2, 0x31);  // 1 | 5
  const __m256 a2 = _mm256_permute2f128_ps(v1, v3, 0x20);  // 2 | 6
  const __m256 a3 = _mm256_permute2f128_ps(v1, v3, 0x31);  // 3 | 7
  const __m256 u0 = _mm256_unpacklo_ps(a0, a1);  // (0,j0) (1,j0) (0,j1) (1,j1) | the same for 4, 5
  const __m256 u1 = _mm256_unpackhi_ps(a0, a1);  // taps 2, 3
  const __m256 u2 = _mm256_unpacklo_ps(a2, a3);  // channels 2, 3 (6, 7), taps 0, 1
  const __m256 u3 = _mm256_unpackhi_ps(a2, a3);
  tap[0] = _mm256_shuffle_ps(u0, u2, 0x44);
  tap[1] = _mm256_shuffle_ps(u0, u2, 0xEE);
  tap[2] = _mm256_shuffle_ps(u1, u3, 0x44);
  tap[3] = _mm256_shuffle_ps(u1, u3, 0xEE);
}

}  // namespace

void CausalConv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t C, const float* w,
                      const float* bias, int width, float* state, int64_t ld_state, float* out,
                      int64_t ldo) {
  const bool direct = width == 4 && C % 8 == 0 && T <= kDirectTapsMaxT;
  float* taps = nullptr;
  if (!direct) {
    taps = ThreadScratchArray<float>(ScratchSlot::kA, width * C);
    for (int64_t c = 0; c < C; ++c)
      for (int j = 0; j < width; ++j) taps[j * C + c] = w[c * width + j];
  }
  const int hist = width - 1;
  __m256 tap[8];
  for (int64_t c0 = 0; c0 < C; c0 += kTile) {
    const int64_t c1 = std::min(C, c0 + kTile);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t c = c0; c < c1; c += 8) {
        const int64_t lanes = std::min<int64_t>(8, c1 - c);
        if (direct) {
          Taps4(w + c * 4, tap);
        } else {
          for (int j = 0; j < width; ++j)
            tap[j] = lanes == 8 ? _mm256_loadu_ps(taps + j * C + c) : LoadPartial(taps + j * C + c, lanes, 0.0f);
        }
        __m256 acc = ConvAt(x, ldx, t, c, lanes, tap, bias, width, state, ld_state);
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
