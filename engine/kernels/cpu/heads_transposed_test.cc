// The W_UK absorption product (HeadsTransposedBf16): (1) the reference against a
// double-accumulated sum (tolerance 1e-5·sqrt(n_in) abs + 1e-5 rel: fp32 sums of n_in products
// of order 1; a wrong head, row or column gives errors of order 1); (2) every optimised table
// against the reference bit for bit, over shapes that hit every tile tail (rows not a multiple
// of 6, columns not a multiple of 16 or 8) with padded strides; (3) the entry point split over
// heads on a pool equals the reference bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomBf16;
using testing::RandomFloats;

struct Shape {
  int64_t M, H, n_in, n_out;
};

// Inputs with padding between heads and rows, so a stride mix-up reads other values.
struct Problem {
  Shape s;
  int64_t x_head_stride, ldx, w_head_stride, ldy;
  std::vector<float> x;
  std::vector<uint16_t> w;

  Problem(const Shape& shape, uint32_t seed)
      : s(shape),
        x_head_stride(shape.n_in + 2),
        ldx(shape.H * (shape.n_in + 2) + 3),
        w_head_stride(shape.n_in * shape.n_out + 5),
        ldy(shape.H * shape.n_out + 4),
        x(RandomFloats(size_t(shape.M * ldx), seed)),
        w(RandomBf16(size_t(shape.H * w_head_stride), seed + 1)) {}

  std::vector<float> Run(HeadsTransposedBf16Fn fn) const {
    std::vector<float> y(size_t(s.M * ldy), -7.0f);
    fn(x.data(), ldx, x_head_stride, w.data(), w_head_stride, s.M, s.H, s.n_in, s.n_out, y.data(), ldy);
    return y;
  }
};

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const Shape kShapes[] = {{1, 1, 1, 1},  {1, 3, 7, 13},  {5, 2, 9, 40},   {6, 2, 16, 16}, {7, 3, 33, 24},
                         {13, 2, 20, 47}, {17, 2, 5, 8}, {12, 1, 3, 31}, {16, 12, 128, 512}};  // last: k3-mini

TEST(HeadsTransposedTest, ReferenceIsTheProduct) {
  for (const Shape& s : kShapes) {
    Problem p(s, 10 + uint32_t(s.M));
    const std::vector<float> got = p.Run(ref::HeadsTransposedBf16);
    std::vector<float> want(got);  // padding keeps its value
    for (int64_t m = 0; m < s.M; ++m) {
      for (int64_t h = 0; h < s.H; ++h) {
        for (int64_t c = 0; c < s.n_out; ++c) {
          double acc = 0.0;
          for (int64_t n = 0; n < s.n_in; ++n) {
            acc += double(p.x[m * p.ldx + h * p.x_head_stride + n]) * Bf16ToF32(p.w[h * p.w_head_stride + n * s.n_out + c]);
          }
          want[m * p.ldy + h * s.n_out + c] = float(acc);
        }
      }
    }
    EXPECT_TRUE(AllClose(got, want, 1e-5f * std::sqrt(float(s.n_in)), 1e-5f)) << "M=" << s.M << " n_out=" << s.n_out;
  }
}

TEST(HeadsTransposedTest, OptimisedEqualsReferenceBitForBit) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    for (const Shape& s : kShapes) {
      Problem p(s, 20 + uint32_t(s.n_out));
      EXPECT_TRUE(BitEqual(p.Run(table->heads_transposed_bf16), p.Run(ref::HeadsTransposedBf16)))
          << table->isa << " M=" << s.M << " H=" << s.H << " n_in=" << s.n_in << " n_out=" << s.n_out;
    }
  }
}

TEST(HeadsTransposedTest, EntryPointSplitOverHeadsEqualsReference) {
  ThreadPool pool(2);
  for (const Shape& s : {Shape{16, 5, 24, 40}, Shape{3, 12, 128, 512}}) {
    // The entry point writes y: [M, H, n_out] contiguous.
    Problem p(s, 30);
    p.ldy = s.H * s.n_out;
    const std::vector<float> want = p.Run(ref::HeadsTransposedBf16);
    for (ThreadPool* tp : {&pool, static_cast<ThreadPool*>(nullptr)}) {
      std::vector<float> got(want.size(), -7.0f);
      HeadsTransposedBf16(p.x.data(), p.ldx, p.x_head_stride, p.w.data(), p.w_head_stride, s.M, s.H, s.n_in, s.n_out,
                          got.data(), tp);
      EXPECT_TRUE(BitEqual(got, want)) << "M=" << s.M << " H=" << s.H << (tp ? " pool" : " no pool");
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
