#include "model/linear.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/thread_pool.h"
#include "kernels/cpu/scratch.h"

namespace kimi::model {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define KIMI_X86_64_V3_CLONE [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define KIMI_X86_64_V3_CLONE
#endif

inline float Bf16(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// Rows handled per pass over W: their outputs (kRowBlock · n_out floats) stay in L1 while W streams.
constexpr int64_t kRowBlock = 8;

// y[m, :] = Σ_n x[m, n] · W[n, :] for `rows` rows: one pass over W's rows for all of them, each
// an axpy the compiler vectorises. A row of W is widened to fp32 once (`wide`, n_out floats)
// and shared by the rows, rather than converted again for every row. Every output element sums
// its products in n order, however many rows share the pass, so a row's result does not depend
// on the batch around it.
// engine/model is compiled for baseline x86-64 (SSE2), where this loop runs 4 floats wide; on a
// CPU with AVX2 the loader picks the x86-64-v3 clone, 8 wide (1.7× faster on k3-mini's W_UK
// absorption; docs/benchmarks.md). Both give the same bits: linear.cc is compiled with
// -ffp-contract=off (engine/model/CMakeLists.txt), so each element takes the same multiply
// then add, in the same order, on either path.
KIMI_X86_64_V3_CLONE
void TransposedRows(const float* x, int64_t ldx, int64_t rows, const uint16_t* w, int64_t n_in, int64_t n_out,
                    float* y, int64_t ldy, float* wide) {
  for (int64_t m = 0; m < rows; ++m) std::memset(y + m * ldy, 0, sizeof(float) * n_out);
  for (int64_t n = 0; n < n_in; ++n) {
    const uint16_t* row = w + n * n_out;
    for (int64_t c = 0; c < n_out; ++c) wide[c] = Bf16(row[c]);
    for (int64_t m = 0; m < rows; ++m) {
      const float a = x[m * ldx + n];
      float* out = y + m * ldy;
      for (int64_t c = 0; c < n_out; ++c) out[c] += a * wide[c];
    }
  }
}

}  // namespace

void HeadsTransposedProduct(const float* x, int64_t ldx, int64_t x_head_stride, const uint16_t* w,
                            int64_t w_head_stride,
                            int64_t M, int64_t H, int64_t n_in, int64_t n_out, float* y,
                            ThreadPool* pool) {
  auto heads = [&](int64_t h0, int64_t h1, int) {
    float* wide = kernels::ThreadScratchArray<float>(kernels::ScratchSlot::kD, size_t(n_out));
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t m0 = 0; m0 < M; m0 += kRowBlock) {
        TransposedRows(x + m0 * ldx + h * x_head_stride, ldx, std::min(kRowBlock, M - m0), w + h * w_head_stride, n_in,
                       n_out, y + (m0 * H + h) * n_out, H * n_out, wide);
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
