// Dense products: every optimised GEMV/GEMM against the double-accumulating reference, over
// sizes that hit every tail (rows not a multiple of 4/6, columns not a multiple of 8/16, K
// past the 256-wide blocks, N past the 128-wide blocks) and padded row strides.
// Tolerance: atol = 1e-5·sqrt(K) (fp32 accumulation of K products of magnitude <= ~3),
// rtol = 1e-5, plus for the MXFP4 decode GEMV the documented bound of its int16 activation
// rounding, computed per output; an indexing or decoding bug gives errors of order 1.
#include <cmath>

#include <algorithm>
#include <bit>
#include <string>

#include "core/thread_pool.h"
#include "kernels/cpu/avx2/avx2.h"
#include "core/cpu_features.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"
#include "kimi/dtype.h"

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomBf16;
using testing::RandomBytes;
using testing::RandomFloats;

struct Shape {
  int64_t M, N, K;
};

TEST(MatmulTest, Bf16OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  const Shape shapes[] = {{1, 1, 1},   {1, 5, 7},    {2, 17, 9},    {3, 16, 8},   {4, 33, 300},
                          {5, 130, 64}, {7, 9, 520}, {8, 40, 257},  {9, 17, 31},  {13, 130, 300},
                          {33, 47, 520}, {64, 16, 16},
                          // The decode GEMV's strips: 8 rows (M = 1) and 4 rows (M > 1) with
                          // their tails, rows short enough to prefetch the next strip (K <= 2048)
                          // and long ones that prefetch along the row, K % 16 tails.
                          {1, 37, 1040}, {1, 16, 1024}, {1, 19, 2064}, {1, 8, 23}, {2, 21, 48},
                          {5, 13, 2100},
                          // The batch tiles: 2 weight rows × 6 activation rows, every M % 6
                          // tail, an odd last weight row.
                          {6, 7, 1040}, {12, 9, 48}, {16, 33, 1024}, {11, 5, 2064}, {32, 18, 100}};
  for (const KernelTable* table : testing::OptimisedTables()) {
    for (const Shape& s : shapes) {
      const int64_t ldx = s.K + 3, ldy = s.N + 2;
      auto x = RandomFloats(s.M * ldx, 1 + s.M);
      auto w = RandomBf16(s.N * s.K, 2 + s.N);
      std::vector<float> want(s.M * ldy, 0.0f), got(s.M * ldy, 0.0f);
      ref::MatmulBf16(x.data(), ldx, w.data(), s.M, s.N, s.K, want.data(), ldy);
      const float atol = 1e-5f * std::sqrt(float(s.K));
      for (MatmulBf16Fn fn : {table->gemv_bf16, table->gemm_bf16}) {
        std::fill(got.begin(), got.end(), 0.0f);
        fn(x.data(), ldx, w.data(), s.M, s.N, s.K, got.data(), ldy);
        EXPECT_TRUE(AllClose(got, want, atol, 1e-5f))
            << table->isa << " " << (fn == table->gemv_bf16 ? "gemv" : "gemm") << " M=" << s.M << " N=" << s.N
            << " K=" << s.K;
      }
    }
  }
}

// The MXFP4 shapes: every strip layout and its tails, K/32 odd and even, M past the GEMV's
// tile of 2 and past the GEMV/GEMM crossover.
const Shape kMxfp4Shapes[] = {{1, 1, 32},  {1, 5, 64},   {2, 17, 96},  {3, 16, 288}, {4, 33, 544},
                              {5, 130, 32}, {8, 9, 256}, {9, 21, 320}, {13, 130, 544}, {40, 7, 64},
                              // The decode GEMV's strips: short rows prefetching ahead (4 rows),
                              // long rows at batch 1 (8 rows), with their tails.
                              {1, 37, 512}, {1, 21, 2080}, {1, 8, 2112}, {2, 11, 2080}, {3, 9, 2080}};

// Checks fn against the reference on every shape. A GEMV that rounds x to `levels` steps per
// block (scale max|x|/levels, round to nearest) may differ by at most its documented bound
// Σ_b (max|x_b| / (2·levels))·Σ_{i∈b}|w_i| on top of the fp32 tolerance; levels = 0: fp32 x.
void ExpectMxfp4MatchesReference(MatmulMxfp4Fn fn, double levels, const char* name) {
  for (const Shape& s : kMxfp4Shapes) {
    const int64_t ldx = s.K + 1, ldy = s.N + 5;
    auto x = RandomFloats(s.M * ldx, 3 + s.K);
    auto packed = RandomBytes(s.N * s.K / 2, 4 + s.N);
    auto scales = RandomBytes(s.N * s.K / 32, 5 + s.N, 124, 129);
    std::vector<float> want(s.M * ldy, 0.0f), got(s.M * ldy, 0.0f);
    ref::MatmulMxfp4(x.data(), ldx, packed.data(), scales.data(), s.M, s.N, s.K, want.data(), ldy);
    const float atol = 1e-5f * std::sqrt(float(s.K)) * 4;  // |w| up to 6·2^2
    fn(x.data(), ldx, packed.data(), scales.data(), s.M, s.N, s.K, got.data(), ldy);
    for (int64_t m = 0; m < s.M; ++m) {
      for (int64_t n = 0; n < s.N; ++n) {
        double bound = atol + 1e-5 * std::fabs(want[m * ldy + n]);
        for (int64_t b = 0; levels > 0 && b < s.K / 32; ++b) {
          double amax = 0, wsum = 0;
          for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
            amax = std::max(amax, double(std::fabs(x[m * ldx + i])));
            wsum += std::fabs(Mxfp4Element(packed.data() + n * s.K / 2, scales.data() + n * s.K / 32, i));
          }
          bound += amax / (2 * levels) * wsum;
        }
        ASSERT_LE(std::fabs(got[m * ldy + n] - want[m * ldy + n]), bound)
            << name << " M=" << s.M << " N=" << s.N << " K=" << s.K << " at " << m << "," << n;
      }
    }
  }
}

TEST(MatmulTest, Mxfp4OptimisedMatchesReference) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    // The table's GEMV quantises x to int16 (32767 levels per block).
    ExpectMxfp4MatchesReference(table->gemv_mxfp4, table == &ReferenceKernels() ? 0 : 32767,
                                (std::string(table->isa) + " gemv").c_str());
    ExpectMxfp4MatchesReference(table->gemm_mxfp4, 0, (std::string(table->isa) + " gemm").c_str());
  }
}

// The reference itself against a hand-computed product (so the reference can fail too).
TEST(MatmulTest, ReferenceComputesKnownProducts) {
  const float x[2 * 3] = {1, 2, 3, -1, 0, 0.5f};
  const uint16_t w[2 * 3] = {F32ToBf16(1), F32ToBf16(0), F32ToBf16(-2), F32ToBf16(0.5f), F32ToBf16(4), F32ToBf16(1)};
  float y[4];
  ref::MatmulBf16(x, 3, w, 2, 2, 3, y, 2);
  EXPECT_FLOAT_EQ(y[0], 1 - 6);
  EXPECT_FLOAT_EQ(y[1], 0.5f + 8 + 3);
  EXPECT_FLOAT_EQ(y[2], -1 - 1);
  EXPECT_FLOAT_EQ(y[3], -0.5f + 0.5f);

  // One MXFP4 row of 32: element i has code (i % 16); scale 2^1.
  uint8_t packed[16], scale[1] = {128};
  for (int i = 0; i < 16; ++i) packed[i] = static_cast<uint8_t>(((2 * i) % 16) | (((2 * i + 1) % 16) << 4));
  float ones[32];
  for (float& v : ones) v = 1.0f;
  float out;
  ref::MatmulMxfp4(ones, 32, packed, scale, 1, 1, 32, &out, 1);
  // Each code appears twice; the positive and negative codes cancel except ±0.
  EXPECT_FLOAT_EQ(out, 0.0f);
  ones[1] = 0.0f;  // drop element 1 (code 1 = +0.5): sum becomes −0.5·2
  ref::MatmulMxfp4(ones, 32, packed, scale, 1, 1, 32, &out, 1);
  EXPECT_FLOAT_EQ(out, -1.0f);
}

#if defined(__x86_64__)
// Each AVX2 MXFP4 GEMV, whichever the table picks, within its own bound.
TEST(MatmulTest, EveryAvx2Mxfp4GemvMatchesReference) {
  if (Avx2Kernels() == nullptr) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  ExpectMxfp4MatchesReference(avx2::GemvMxfp4F32, 0, "avx2 gemv fp32 x");
  ExpectMxfp4MatchesReference(avx2::GemvMxfp4Q16, 32767, "avx2 gemv int16 x");
}

// The BF16 decode GEMV's batch forms in 256-bit and 512-bit registers give the same bits (so
// both equal the rows alone, BatchedRowsEqualRowsAlone), over odd and even batch sizes (a
// missing last row of a pair), the 4-pair tiles and their tails, weight strips of 4 and the
// 1–3 rows left over, K % 16 tails, rows short and long enough for either prefetch, and they
// write nothing outside the output rows.
TEST(MatmulTest, Bf16BatchFormsAgree) {
  if (Avx2Kernels() == nullptr || !cpu::HasAvx512F()) GTEST_SKIP() << "no AVX-512F on this CPU";
  for (int64_t K : {16, 31, 48, 100, 1040, 2055, 2112}) {
    for (int64_t N : {1, 2, 3, 7, 45}) {
      const int64_t ldx = K + 3, ldy = N + 2;
      auto w = RandomBf16(N * K, 90 + N + K);
      for (int64_t M : {2, 3, 5, 8, 9, 16, 17, 23, 64}) {
        auto x = RandomFloats(M * ldx, 91 + M);
        std::vector<float> narrow(M * ldy, 7.0f), wide(M * ldy, 7.0f);
        avx2::GemvBf16Batch256(x.data(), ldx, w.data(), M, N, K, narrow.data(), ldy);
        avx2::GemvBf16Batch512(x.data(), ldx, w.data(), M, N, K, wide.data(), ldy);
        EXPECT_TRUE(std::equal(narrow.begin(), narrow.end(), wide.begin()))
            << "M=" << M << " N=" << N << " K=" << K;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = N; n < ldy; ++n)
            EXPECT_EQ(wide[m * ldy + n], 7.0f) << "M=" << M << " N=" << N << " K=" << K;
      }
    }
  }
}

// The MXFP4 decode GEMV in 256-bit and 512-bit registers gives the same bits: M 1–16 (the
// 512-bit tiles of 4 rows and their tails), row counts with strips of 8 and 4 and the 2- and
// 1-row tails (a strip of one row runs as two copies), K with four-pair groups, fewer pairs
// and a lone last block, k3-mini's expert shapes, scale bytes with and without the fast form;
// and neither writes outside the output rows.
TEST(MatmulTest, Mxfp4GemvFormsAgree) {
  if (Avx2Kernels() == nullptr || !cpu::HasAvx512Vnni()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  const std::pair<int64_t, int64_t> shapes[] = {{256, 512}, {512, 256}, {1, 32}, {3, 64}, {7, 96}, {9, 160},
                                                {13, 224}, {17, 288}, {45, 544}, {38, 2080}};
  for (const auto& [N, K] : shapes) {
    const int64_t ldx = K + 3, ldy = N + 2;
    auto packed = RandomBytes(N * K / 2, 95 + N);
    for (bool fast : {true, false}) {
      auto scales = RandomBytes(N * K / 32, 96 + K, 110, 135);
      if (!fast) scales[N * K / 32 / 2] = 4;  // outside the fast form: the table for that strip
      for (int64_t M = 1; M <= 16; ++M) {
        auto x = RandomFloats(M * ldx, 97 + M);
        std::vector<float> narrow(M * ldy, 7.0f), wide(M * ldy, 7.0f);
        avx2::GemvMxfp4Q16Form256(x.data(), ldx, packed.data(), scales.data(), M, N, K, narrow.data(), ldy);
        avx2::GemvMxfp4Q16Form512(x.data(), ldx, packed.data(), scales.data(), M, N, K, wide.data(), ldy);
        for (int64_t i = 0; i < M * ldy; ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(narrow[i]), std::bit_cast<uint32_t>(wide[i]))
              << "M=" << M << " N=" << N << " K=" << K << " fast=" << fast << " at " << i;
          if (i % ldy >= N) {
            ASSERT_EQ(wide[i], 7.0f);
          }
        }
      }
    }
  }
}
#endif

// The decode GEMV builds weight scales from their bits when every scale byte of a strip of rows
// is in [10, 254] and reads them from a table otherwise: one scale byte outside that range
// (an exponent below 10, NaN) must change only its own row, and leave the others equal bit
// for bit to the fast form's result.
TEST(MatmulTest, Mxfp4GemvScaleFormsAgree) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    for (int64_t K : {256, 512, 544, 2080}) {
      const int64_t N = 19, odd_row = 5;
      auto x = RandomFloats(K, 80 + K);
      auto packed = RandomBytes(N * K / 2, 81);
      auto scales = RandomBytes(N * K / 32, 82, 100, 140);
      std::vector<float> fast(N), slow(N), want(N);
      table->gemv_mxfp4(x.data(), K, packed.data(), scales.data(), 1, N, K, fast.data(), N);
      for (uint8_t odd_scale : {uint8_t(3), uint8_t(255)}) {
        auto changed = scales;
        changed[odd_row * K / 32 + 1] = odd_scale;
        table->gemv_mxfp4(x.data(), K, packed.data(), changed.data(), 1, N, K, slow.data(), N);
        ref::MatmulMxfp4(x.data(), K, packed.data(), changed.data(), 1, N, K, want.data(), N);
        for (int64_t n = 0; n < N; ++n) {
          if (n != odd_row) {
            EXPECT_EQ(slow[n], fast[n]) << table->isa << " K=" << K << " row " << n << " scale " << int(odd_scale);
          } else if (odd_scale == 255) {
            EXPECT_TRUE(std::isnan(slow[n])) << table->isa << " K=" << K;
          } else {
            EXPECT_NEAR(slow[n], want[n], 1e-3 * (1 + std::fabs(want[n]))) << table->isa << " K=" << K;
          }
        }
      }
    }
  }
}

TEST(MatmulTest, ThreadedEntryPointsMatchReference) {
  ThreadPool pool(3);
  // 65 and 100 rows: past the BF16 GEMV's limit, the GEMM on the activations as given.
  for (int64_t M : {1, 3, 8, 9, 20, 65, 100}) {
    const int64_t N = 70, K = 96;
    auto x = RandomFloats(M * K, 7);
    auto w = RandomBf16(N * K, 8);
    auto packed = RandomBytes(N * K / 2, 9);
    auto scales = RandomBytes(N * K / 32, 10, 125, 128);
    std::vector<float> want(M * N), got(M * N);
    ref::MatmulBf16(x.data(), K, w.data(), M, N, K, want.data(), N);
    MatmulBf16(x.data(), K, w.data(), M, N, K, got.data(), N, &pool);
    EXPECT_TRUE(AllClose(got, want, 1e-4f, 1e-5f)) << "bf16 M=" << M;
    ref::MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, want.data(), N);
    MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, got.data(), N, &pool);
    // Includes the int16 activation rounding of the decode path (relative ~2e-5, see kernels.h).
    EXPECT_TRUE(AllClose(got, want, 2e-3f, 1e-4f)) << "mxfp4 M=" << M;
  }
}

// Every row count an expert can receive in a prefill, on k3-nano's expert shapes, on both
// sides of the GEMV/GEMM cut-over: each row as the reference computes it.
TEST(MatmulTest, Mxfp4EveryRowCountMatchesReference) {
  ThreadPool pool(2);
  const Shape shapes[] = {{0, 96, 64}, {0, 64, 96}};
  for (const Shape& s : shapes) {
    const int64_t N = s.N, K = s.K;
    auto packed = RandomBytes(N * K / 2, 60 + N);
    auto scales = RandomBytes(N * K / 32, 61 + N, 125, 128);
    for (int64_t M = 1; M <= 72; ++M) {
      auto x = RandomFloats(M * K, 62 + M);
      std::vector<float> want(M * N), got(M * N), alone(M * N);
      ref::MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, want.data(), N);
      MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, got.data(), N, &pool);
      MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, alone.data(), N, nullptr);
      EXPECT_TRUE(AllClose(got, want, 2e-3f, 1e-4f)) << "N=" << N << " K=" << K << " M=" << M;
      EXPECT_TRUE(AllClose(alone, want, 2e-3f, 1e-4f)) << "one thread, N=" << N << " K=" << K << " M=" << M;
    }
  }
}

// A batch of products in one parallel region gives each product exactly MatmulBf16's result,
// whichever thread computes which rows (the split crosses product boundaries).
TEST(MatmulTest, Bf16BatchEqualsSeparateProducts) {
  ThreadPool pool(3);
  for (int64_t M : {1, 2, 7, 70}) {
    const Shape shapes[] = {{M, 40, 64}, {M, 7, 96}, {M, 130, 1040}, {M, 16, 33}};
    std::vector<std::vector<float>> xs, want, got;
    std::vector<std::vector<uint16_t>> ws;
    std::vector<Bf16Product> products;
    for (const Shape& s : shapes) {
      const int64_t ldx = s.K + 5, ldy = s.N + 3;
      xs.push_back(RandomFloats(M * ldx, 40 + s.N));
      ws.push_back(RandomBf16(s.N * s.K, 41 + s.K));
      want.emplace_back(M * ldy, 0.0f);
      got.emplace_back(M * ldy, 0.0f);
      MatmulBf16(xs.back().data(), ldx, ws.back().data(), M, s.N, s.K, want.back().data(), ldy, nullptr);
    }
    for (size_t i = 0; i < xs.size(); ++i) {
      const Shape& s = shapes[i];
      products.push_back({xs[i].data(), s.K + 5, ws[i].data(), s.N, s.K, got[i].data(), s.N + 3});
    }
    MatmulBf16Batch(products, M, &pool);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], want[i]) << "M=" << M << " product " << i;
  }
}

// Products that share their activations (a layer's projections of one normed input) share one
// prepared copy of them; each still equals MatmulBf16 alone, on one thread, bit for bit.
TEST(MatmulTest, Bf16BatchProductsSharingTheirInput) {
  ThreadPool pool(3);
  for (int64_t M : {1, 5, 16}) {
    const int64_t K = 1040, ldx = K + 3;
    auto x = RandomFloats(M * ldx, 50 + M), other = RandomFloats(M * K, 51 + M);
    const int64_t Ns[] = {96, 40, 130, 17};
    std::vector<std::vector<uint16_t>> ws;
    std::vector<std::vector<float>> want, got;
    std::vector<Bf16Product> products;
    for (size_t i = 0; i < 4; ++i) {
      ws.push_back(RandomBf16(Ns[i] * K, 52 + uint32_t(i)));
      want.emplace_back(M * Ns[i], 0.0f);
      got.emplace_back(M * Ns[i], 0.0f);
    }
    for (size_t i = 0; i < 4; ++i) {
      const bool shared = i != 2;  // products 0, 1 and 3 read x, product 2 another input
      const float* in = shared ? x.data() : other.data();
      const int64_t ld = shared ? ldx : K;
      MatmulBf16(in, ld, ws[i].data(), M, Ns[i], K, want[i].data(), Ns[i], nullptr);
      products.push_back({in, ld, ws[i].data(), Ns[i], K, got[i].data(), Ns[i]});
    }
    MatmulBf16Batch(products, M, &pool);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], want[i]) << "M=" << M << " product " << i;
  }
}

// The GEMV in two parts: activations prepared once, then slices of the weight rows against
// them, give each row what the whole product gives it, and write nothing else.
TEST(MatmulTest, PreparedGemvSlicesEqualTheWholeProduct) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    if (table->prepare_gemv_bf16 == nullptr) continue;
    for (int64_t K : {16, 31, 48, 1040, 2055}) {
      const int64_t N = 45, ldx = K + 2, ldy = N + 3;
      auto w = RandomBf16(N * K, 120 + K);
      for (int64_t M : {1, 2, 3, 7, 16, 17}) {
        auto x = RandomFloats(M * ldx, 121 + M);
        std::vector<float> whole(M * ldy, 7.0f), sliced(M * ldy, 7.0f);
        table->gemv_bf16(x.data(), ldx, w.data(), M, N, K, whole.data(), ldy);
        std::vector<float> prepared(size_t(table->gemv_bf16_prepared_floats(M, K)));
        table->prepare_gemv_bf16(x.data(), ldx, M, K, prepared.data());
        for (int64_t n0 : {0, 16, 32}) {
          const int64_t n1 = std::min<int64_t>(N, n0 + 16);
          table->gemv_bf16_prepared(prepared.data(), x.data(), ldx, w.data() + n0 * K, M, n1 - n0, K,
                                    sliced.data() + n0, ldy);
        }
        EXPECT_EQ(sliced, whole) << table->isa << " M=" << M << " K=" << K;
      }
    }
  }
}

// The decode products hand out rows in chunks to whichever thread is free; every row must come
// out bit for bit as on one thread, whatever chunk (and thread) computed it.
TEST(MatmulTest, ChunkedDecodeProductsEqualOneThread) {
  ThreadPool pool(3);
  for (int64_t M : {1, 3, 16}) {
    const int64_t N = 1000, K = 512;
    auto x = RandomFloats(M * K, 60 + M);
    auto w = RandomBf16(N * K, 61);
    auto packed = RandomBytes(N * K / 2, 62);
    auto scales = RandomBytes(N * K / 32, 63, 124, 129);
    std::vector<float> one(M * N), many(M * N);
    for (int rep = 0; rep < 5; ++rep) {
      MatmulBf16(x.data(), K, w.data(), M, N, K, one.data(), N, nullptr);
      MatmulBf16(x.data(), K, w.data(), M, N, K, many.data(), N, &pool);
      EXPECT_EQ(many, one) << "bf16 M=" << M;
      MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, one.data(), N, nullptr);
      MatmulMxfp4(x.data(), K, packed.data(), scales.data(), M, N, K, many.data(), N, &pool);
      EXPECT_EQ(many, one) << "mxfp4 M=" << M;
    }
  }
}

// A decode batch gives each row exactly the result the row gets alone (the runtime's promise
// that a request's greedy tokens do not depend on what runs beside it rests on this), for
// every batch size the decode GEMV takes and the tile tails.
TEST(MatmulTest, BatchedRowsEqualRowsAlone) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  for (const KernelTable* table : testing::OptimisedTables()) {
    // Rows of at most 2048 values take batch 1's address-order path, longer rows its strips.
    for (int64_t K : {16, 31, 48, 1024, 2055, 2112}) {
      const int64_t N = 23, ldx = K + 1;
      auto w = RandomBf16(N * K, 70 + K);
      auto packed = RandomBytes(N * K / 2, 72);
      auto scales = RandomBytes(N * K / 32, 73, 124, 129);
      for (int64_t M = 2; M <= 64; ++M) {
        auto x = RandomFloats(M * ldx, 71 + M);
        std::vector<float> batched(M * N), alone(N);
        table->gemv_bf16(x.data(), ldx, w.data(), M, N, K, batched.data(), N);
        for (int64_t m = 0; m < M; ++m) {
          table->gemv_bf16(x.data() + m * ldx, ldx, w.data(), 1, N, K, alone.data(), N);
          EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batched.begin() + m * N))
              << table->isa << " bf16 M=" << M << " row " << m << " K=" << K;
        }
        if (K % 32 != 0) continue;
        table->gemv_mxfp4(x.data(), ldx, packed.data(), scales.data(), M, N, K, batched.data(), N);
        for (int64_t m = 0; m < M; ++m) {
          table->gemv_mxfp4(x.data() + m * ldx, ldx, packed.data(), scales.data(), 1, N, K, alone.data(), N);
          EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batched.begin() + m * N))
              << table->isa << " mxfp4 M=" << M << " row " << m << " K=" << K;
        }
      }
    }
  }
}

// Through the entry point: BF16 decode products of up to 64 rows (at any K) take the
// streaming GEMV, so each row equals the row alone; a cut-over that sent them to the blocked
// GEMM (another summation order) would break this on the optimised tables.
TEST(MatmulTest, Bf16EntryPointRowsEqualRowsAloneUpTo64) {
  for (int64_t K : {1024, 2048}) {
    const int64_t N = 40;
    auto w = RandomBf16(N * K, 80 + K);
    for (int64_t M : {17, 24, 32, 48, 64}) {
      auto x = RandomFloats(M * K, 81 + M);
      std::vector<float> batched(M * N), alone(N);
      MatmulBf16(x.data(), K, w.data(), M, N, K, batched.data(), N, nullptr);
      for (int64_t m = 0; m < M; ++m) {
        MatmulBf16(x.data() + m * K, K, w.data(), 1, N, K, alone.data(), N, nullptr);
        EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batched.begin() + m * N))
            << "M=" << M << " row " << m << " K=" << K;
      }
    }
  }
}

}  // namespace
}  // namespace kimi::kernels
