// Absorbed MLA attention with AVX2, in two forms with one online softmax (running max and sum,
// the accumulator rescaled when the max grows):
// - per query (decode, short pieces): the cache is walked once per query in blocks of tokens and
//   every head of the slice scores the block while it is in cache (dot products);
// - as products (prefill, kMlaMinProductQueries or more queries): per head and block of up to 64
//   queries, each run of up to 64 cached tokens (within one page) gives the scores
//   Sᵀ = [c_kv | k_pe]·[q_latent | q_pe]ᵀ and the update O += P·c_kv as two GemmF32 calls,
//   reading the cache rows in place; only the block's queries are transposed.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/scratch.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int64_t kTokenBlock = 32;

float Dot(const float* a, const float* b, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
  float s = HorizontalSum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

void Axpy(float alpha, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += alpha * x[i];
}

constexpr int64_t kQueryBlock = 64, kRunTokens = 64;

}  // namespace

void MlaAbsorbedPerQuery(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                 int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                 int64_t ld_out) {
  const int64_t R = cache.kv_rank, P = cache.rope_dim, row = R + P;
  float* run_max = ThreadScratchArray<float>(ScratchSlot::kA, 2 * H);  // [H] max, [H] sum
  const float* rows[kTokenBlock];
  float* run_sum = run_max + H;
  float p[kTokenBlock];
  for (int64_t j = 0; j < nq; ++j) {
    const int64_t n_ctx = q_pos0 + j + 1;
    for (int64_t h = 0; h < H; ++h) {
      run_max[h] = -INFINITY;
      run_sum[h] = 0.0f;
      std::fill(out_latent + j * ld_out + h * R, out_latent + j * ld_out + (h + 1) * R, 0.0f);
    }
    for (int64_t t0 = 0; t0 < n_ctx; t0 += kTokenBlock) {
      const int64_t nt = std::min(kTokenBlock, n_ctx - t0);
      for (int64_t i = 0; i < nt; ++i) {
        const int64_t t = t0 + i;
        rows[i] = cache.pool + (cache.block_table[t / cache.page_size] * cache.page_size + t % cache.page_size) * row;
      }
      for (int64_t h = 0; h < H; ++h) {
        const float* ql = q_latent + j * ld_ql + h * R;
        const float* qp = q_pe + j * ld_qpe + h * P;
        float block_max = -INFINITY;
        for (int64_t i = 0; i < nt; ++i) {
          p[i] = (Dot(ql, rows[i], R) + Dot(qp, rows[i] + R, P)) * scale;
          block_max = std::max(block_max, p[i]);
        }
        float* o = out_latent + j * ld_out + h * R;
        const float new_max = std::max(run_max[h], block_max);
        if (new_max > run_max[h] && run_sum[h] > 0.0f) {
          const float rescale = std::exp(run_max[h] - new_max);
          run_sum[h] *= rescale;
          const __m256 vr = _mm256_set1_ps(rescale);
          int64_t i = 0;
          for (; i + 8 <= R; i += 8) _mm256_storeu_ps(o + i, _mm256_mul_ps(vr, _mm256_loadu_ps(o + i)));
          for (; i < R; ++i) o[i] *= rescale;
        }
        run_max[h] = new_max;
        for (int64_t i = 0; i < nt; ++i) {
          const float e = std::exp(p[i] - new_max);
          run_sum[h] += e;
          Axpy(e, rows[i], o, R);
        }
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      float* o = out_latent + j * ld_out + h * R;
      const float inv = 1.0f / run_sum[h];
      for (int64_t i = 0; i < R; ++i) o[i] *= inv;
    }
  }
}

void MlaAbsorbedProducts(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                         int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                         int64_t ld_out) {
  const int64_t R = cache.kv_rank, P = cache.rope_dim, row = R + P, ps = cache.page_size;
  constexpr int64_t ldq = kQueryBlock;  // scores and transposed queries: 64 columns, the block's first nb used
  float* QT = ThreadScratchArray<float>(ScratchSlot::kA, row * ldq + kRunTokens * ldq + 3 * ldq);
  float* S = QT + row * ldq;        // [tokens of the run, ldq] scores, then probabilities
  float* run_max = S + kRunTokens * ldq;
  float* run_sum = run_max + ldq;
  float* corr = run_sum + ldq;
  const __m256 iota = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t j0 = 0; j0 < nq; j0 += kQueryBlock) {
      const int64_t nb = std::min(kQueryBlock, nq - j0);
      for (int64_t j = 0; j < nb; ++j) {
        const float* ql = q_latent + (j0 + j) * ld_ql + h * R;
        const float* qp = q_pe + (j0 + j) * ld_qpe + h * P;
        for (int64_t k = 0; k < R; ++k) QT[k * ldq + j] = ql[k];
        for (int64_t k = 0; k < P; ++k) QT[(R + k) * ldq + j] = qp[k];
        std::fill(out_latent + (j0 + j) * ld_out + h * R, out_latent + (j0 + j) * ld_out + (h + 1) * R, 0.0f);
      }
      std::fill(run_max, run_max + ldq, -1e30f);  // finite: e^{old − new} is then 0, never NaN
      std::fill(run_sum, run_sum + ldq, 0.0f);
      float* O = out_latent + j0 * ld_out + h * R;
      // Query j sees tokens up to q_pos0 + j0 + j; the block's last query bounds the walk.
      const int64_t n_ctx = q_pos0 + j0 + nb;
      for (int64_t t0 = 0; t0 < n_ctx;) {
        const int64_t off = t0 % ps, nt = std::min({ps - off, kRunTokens, n_ctx - t0});
        const float* C = cache.pool + (cache.block_table[t0 / ps] * ps + off) * row;
        GemmF32(C, row, 1, QT, ldq, nt, nb, row, scale, 0.0f, nullptr, S, ldq);
        // Per query column: the visible tokens' max, then probabilities (0 where not visible).
        for (int64_t j = 0; j < nb; j += 8) {
          const __m256 last = _mm256_add_ps(_mm256_set1_ps(float(q_pos0 + j0 + j - t0)), iota);  // last visible t
          const __m256 lane_ok = _mm256_cmp_ps(_mm256_add_ps(_mm256_set1_ps(float(j)), iota),
                                               _mm256_set1_ps(float(nb)), _CMP_LT_OQ);
          __m256 mx = _mm256_set1_ps(-1e30f);
          for (int64_t t = 0; t < nt; ++t) {
            const __m256 vis = _mm256_and_ps(lane_ok, _mm256_cmp_ps(_mm256_set1_ps(float(t)), last, _CMP_LE_OQ));
            mx = _mm256_max_ps(mx, _mm256_blendv_ps(_mm256_set1_ps(-1e30f), _mm256_loadu_ps(S + t * ldq + j), vis));
          }
          const __m256 old = _mm256_loadu_ps(run_max + j), now = _mm256_max_ps(old, mx);
          const __m256 c = Exp8(_mm256_sub_ps(old, now));
          __m256 sum = _mm256_setzero_ps();
          for (int64_t t = 0; t < nt; ++t) {
            const __m256 vis = _mm256_and_ps(lane_ok, _mm256_cmp_ps(_mm256_set1_ps(float(t)), last, _CMP_LE_OQ));
            const __m256 e = _mm256_and_ps(vis, Exp8(_mm256_sub_ps(_mm256_loadu_ps(S + t * ldq + j), now)));
            _mm256_storeu_ps(S + t * ldq + j, e);
            sum = _mm256_add_ps(sum, e);
          }
          _mm256_storeu_ps(run_max + j, now);
          _mm256_storeu_ps(run_sum + j, _mm256_fmadd_ps(_mm256_loadu_ps(run_sum + j), c, sum));
          _mm256_storeu_ps(corr + j, c);
        }
        for (int64_t j = 0; j < nb; ++j) {
          if (corr[j] != 1.0f) {
            float* o = O + j * ld_out;
            for (int64_t i = 0; i < R; ++i) o[i] *= corr[j];
          }
        }
        GemmF32(S, 1, ldq, C, row, nb, R, nt, 1.0f, 1.0f, nullptr, O, ld_out);
        t0 += nt;
      }
      for (int64_t j = 0; j < nb; ++j) {
        float* o = O + j * ld_out;
        const float inv = 1.0f / run_sum[j];
        for (int64_t i = 0; i < R; ++i) o[i] *= inv;
      }
    }
  }
}

void MlaAbsorbed(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq, int64_t H,
                 int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent, int64_t ld_out) {
  const auto form = nq >= kMlaMinProductQueries ? MlaAbsorbedProducts : MlaAbsorbedPerQuery;
  form(q_latent, ld_ql, q_pe, ld_qpe, nq, H, q_pos0, cache, scale, out_latent, ld_out);
}

}  // namespace kimi::kernels::avx2
