#include "model/linear.h"

#include <bit>
#include <cstring>

#include "core/thread_pool.h"

namespace kimi::model {
namespace {

inline float Bf16(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// y[:] = Σ_n x[n] · W[n, :]: one pass over W's rows, each an axpy the compiler vectorises.
void TransposedRow(const float* x, const uint16_t* w, int64_t n_in, int64_t n_out, float* y) {
  std::memset(y, 0, sizeof(float) * n_out);
  for (int64_t n = 0; n < n_in; ++n) {
    const float a = x[n];
    const uint16_t* row = w + n * n_out;
    for (int64_t c = 0; c < n_out; ++c) y[c] += a * Bf16(row[c]);
  }
}

}  // namespace

void HeadsTransposedProduct(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                            int64_t w_head_stride,
                            int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                            ThreadPool* pool) {
  auto heads = [&](int64_t h0, int64_t h1, int) {
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t m = 0; m < M; ++m) {
        TransposedRow(x + m * ldx + h * x_head_stride, w + h * w_head_stride, n_in, n_out,
                      y + (m * H + h) * n_out);
      }
    }
  };
  if (pool == nullptr) {
    heads(0, H, 0);
  } else {
    pool->ParallelFor(0, H, 1, heads);
  }
}

}  // namespace kimi::model
