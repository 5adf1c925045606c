// Absorbed MLA attention with AVX2. The cache is walked once per query in blocks of tokens;
// every head of the slice scores the block while it is in cache and folds it into its output
// with an online softmax (running max and sum, rescaling the accumulator when the max grows).
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

}  // namespace

void MlaAbsorbed(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
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

}  // namespace kimi::kernels::avx2
