// MLA absorbed attention: (1) optimised vs reference over a paged cache whose block table is
// shuffled (pages out of order), page sizes that do and do not divide the context, several
// query rows (causal); (2) the absorbed form equals plain attention with K and V built
// explicitly from W_UK and W_UV, which is the identity the decode path relies on; (3) both AVX2
// forms (per query, and products for prefill) against the reference on prefill shapes.
// Tolerance 1e-5 abs + 1e-4 rel: both sides are fp32 softmax-weighted averages of values of
// order 1; a wrong page, token or causal bound gives errors of order 0.1.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "core/thread_pool.h"
#include "kernels/cpu/kernel_test_util.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/ref/reference.h"
#if defined(__x86_64__)
#include "kernels/cpu/avx2/avx2.h"
#endif

namespace kimi::kernels {
namespace {

using testing::AllClose;
using testing::RandomFloats;

// A paged cache for n tokens: rows[t] = [c_kv | k_pe], stored in shuffled pages.
struct PagedCache {
  std::vector<float> pool;
  std::vector<int32_t> table;
  MlaPagedCache view;

  PagedCache(const std::vector<float>& rows, int64_t n, int64_t page_size, int64_t R, int64_t P, uint32_t seed) {
    const int64_t pages = (n + page_size - 1) / page_size + 2;  // two unused pages
    table.resize(pages);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(seed));
    pool.assign(pages * page_size * (R + P), std::nanf(""));  // unread slots poison the result
    for (int64_t t = 0; t < n; ++t) {
      float* dst = pool.data() + (table[t / page_size] * page_size + t % page_size) * (R + P);
      std::copy(rows.begin() + t * (R + P), rows.begin() + (t + 1) * (R + P), dst);
    }
    view = MlaPagedCache{pool.data(), table.data(), page_size, R, P};
  }
};

struct MlaCase {
  int64_t R, P, H, n_ctx, nq, page_size;
};

// fn (an MlaFn) on case c against the reference; `what` names fn in a failure.
template <class Fn>
void ExpectMatchesReference(Fn fn, const MlaCase& c, const std::string& what) {
  const int64_t row = c.R + c.P;
  auto rows = RandomFloats(c.n_ctx * row, 40 + c.n_ctx);
  PagedCache cache(rows, c.n_ctx, c.page_size, c.R, c.P, 41);
  auto ql = RandomFloats(c.nq * c.H * c.R, 42);
  auto qp = RandomFloats(c.nq * c.H * c.P, 43);
  const int64_t q_pos0 = c.n_ctx - c.nq;
  const float scale = 1.0f / std::sqrt(float(c.R) / 4);
  std::vector<float> want(c.nq * c.H * c.R), got(c.nq * c.H * c.R);
  ref::MlaAbsorbed(ql.data(), c.H * c.R, qp.data(), c.H * c.P, c.nq, c.H, q_pos0, cache.view, scale, want.data(),
                   c.H * c.R);
  fn(ql.data(), c.H * c.R, qp.data(), c.H * c.P, c.nq, c.H, q_pos0, cache.view, scale, got.data(), c.H * c.R);
  EXPECT_TRUE(AllClose(got, want, 1e-5f, 1e-4f))
      << what << " R=" << c.R << " n_ctx=" << c.n_ctx << " nq=" << c.nq << " page=" << c.page_size;
}

TEST(MlaTest, OptimisedMatchesReferenceOnPagedCache) {
  KIMI_SKIP_WITHOUT_OPTIMISED_TABLES();
  const MlaCase cases[] = {{512, 64, 4, 1, 1, 16}, {512, 64, 3, 70, 1, 16}, {512, 64, 2, 33, 3, 5},
                           {24, 8, 3, 100, 2, 7},  {13, 3, 2, 40, 1, 64},   {512, 64, 2, 150, 40, 64}};
  for (const KernelTable* t : testing::OptimisedTables()) {
    for (const MlaCase& c : cases) ExpectMatchesReference(t->mla_absorbed, c, t->isa);
  }
}

#if defined(__x86_64__)
// Both AVX2 forms (the products in each GEMM register width) over prefill shapes: a whole prompt (q_pos0 = 0) and a piece after earlier
// ones, query blocks of 64 and a ragged one (70 = 64 + 6, 19), runs of tokens cut by pages of
// 5, 16 and 64 and by the 64-token run, and widths that are not multiples of 8.
TEST(MlaTest, Avx2FormsMatchReferenceOnPrefillShapes) {
  if (Avx2Kernels() == nullptr) GTEST_SKIP() << "this CPU has no AVX2+FMA";
  const MlaCase cases[] = {{512, 64, 2, 70, 70, 64}, {512, 64, 3, 130, 19, 16}, {24, 8, 2, 90, 33, 5},
                           {13, 3, 2, 200, 64, 64},  {40, 8, 1, 16, 16, 7}};
  for (const MlaCase& c : cases) {
    testing::ForEachGemmWidth([&](int bits) {
      ExpectMatchesReference(avx2::MlaAbsorbedProducts, c, "products " + std::to_string(bits) + "-bit");
    });
    ExpectMatchesReference(avx2::MlaAbsorbedPerQuery, c, "per query");
  }
}
#endif

TEST(MlaTest, AbsorbedEqualsNaiveAttentionWithExplicitKV) {
  ThreadPool pool(2);
  const int64_t H = 3, d_nope = 16, P = 8, d_v = 12, R = 40, n_ctx = 29, page_size = 6;
  auto w_uk = RandomFloats(H * d_nope * R, 50, -0.3f, 0.3f);  // [H, d_nope, R]
  auto w_uv = RandomFloats(H * d_v * R, 51, -0.3f, 0.3f);     // [H, d_v, R]
  auto rows = RandomFloats(n_ctx * (R + P), 52);              // [t] = c_kv | k_pe
  auto q_nope = RandomFloats(H * d_nope, 53);
  auto q_pe = RandomFloats(H * P, 54);
  const float scale = 1.0f / std::sqrt(float(d_nope + P));

  // Naive: K_h[t] = [W_UK[h]·c_kv[t] | k_pe[t]], V_h[t] = W_UV[h]·c_kv[t].
  std::vector<double> naive(H * d_v, 0.0);
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> scores(n_ctx);
    for (int64_t t = 0; t < n_ctx; ++t) {
      const float* c_kv = rows.data() + t * (R + P);
      double s = 0;
      for (int64_t i = 0; i < d_nope; ++i) {
        double k = 0;
        for (int64_t r = 0; r < R; ++r) k += double(w_uk[(h * d_nope + i) * R + r]) * c_kv[r];
        s += q_nope[h * d_nope + i] * k;
      }
      for (int64_t i = 0; i < P; ++i) s += double(q_pe[h * P + i]) * c_kv[R + i];
      scores[t] = s * scale;
    }
    double mx = *std::max_element(scores.begin(), scores.end()), sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - mx));
    for (int64_t t = 0; t < n_ctx; ++t) {
      const float* c_kv = rows.data() + t * (R + P);
      for (int64_t i = 0; i < d_v; ++i) {
        double v = 0;
        for (int64_t r = 0; r < R; ++r) v += double(w_uv[(h * d_v + i) * R + r]) * c_kv[r];
        naive[h * d_v + i] += scores[t] / sum * v;
      }
    }
  }

  // Absorbed: q_latent = W_UKᵀ·q_nope, attention in latent space, then W_UV.
  std::vector<float> q_latent(H * R, 0.0f), out_latent(H * R);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < d_nope; ++i)
      for (int64_t r = 0; r < R; ++r) q_latent[h * R + r] += w_uk[(h * d_nope + i) * R + r] * q_nope[h * d_nope + i];
  PagedCache cache(rows, n_ctx, page_size, R, P, 55);
  MlaAbsorbedAttention(q_latent.data(), q_pe.data(), 1, H, n_ctx - 1, cache.view, scale, out_latent.data(), &pool);
  std::vector<float> absorbed(H * d_v, 0.0f), want(naive.begin(), naive.end());
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < d_v; ++i)
      for (int64_t r = 0; r < R; ++r) absorbed[h * d_v + i] += w_uv[(h * d_v + i) * R + r] * out_latent[h * R + r];
  EXPECT_TRUE(AllClose(absorbed, want, 1e-5f, 1e-4f));
}

}  // namespace
}  // namespace kimi::kernels
