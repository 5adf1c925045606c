// Reference absorbed MLA attention over the paged latent cache: scores, causal softmax and the
// probability-weighted sum of c_kv, one head and one query at a time.
#include <cmath>
#include <vector>

#include "kernels/cpu/ref/reference.h"

namespace kimi::kernels::ref {

void MlaAbsorbed(const float* q_latent, int64_t ld_ql, const float* q_pe, int64_t ld_qpe, int64_t nq,
                 int64_t H, int64_t q_pos0, const MlaPagedCache& cache, float scale, float* out_latent,
                 int64_t ld_out) {
  const int64_t R = cache.kv_rank, P = cache.rope_dim, row = R + P;
  auto token_row = [&](int64_t t) {
    int64_t page = cache.block_table[t / cache.page_size];
    return cache.pool + (page * cache.page_size + t % cache.page_size) * row;
  };
  std::vector<double> p;
  for (int64_t j = 0; j < nq; ++j) {
    const int64_t n_ctx = q_pos0 + j + 1;
    p.assign(n_ctx, 0.0);
    for (int64_t h = 0; h < H; ++h) {
      const float* ql = q_latent + j * ld_ql + h * R;
      const float* qp = q_pe + j * ld_qpe + h * P;
      double mx = -INFINITY;
      for (int64_t t = 0; t < n_ctx; ++t) {
        const float* kv = token_row(t);
        double s = 0.0;
        for (int64_t i = 0; i < R; ++i) s += double(ql[i]) * kv[i];
        for (int64_t i = 0; i < P; ++i) s += double(qp[i]) * kv[R + i];
        p[t] = s * scale;
        mx = std::fmax(mx, p[t]);
      }
      double sum = 0.0;
      for (int64_t t = 0; t < n_ctx; ++t) sum += (p[t] = std::exp(p[t] - mx));
      float* o = out_latent + j * ld_out + h * R;
      for (int64_t i = 0; i < R; ++i) {
        double acc = 0.0;
        for (int64_t t = 0; t < n_ctx; ++t) acc += p[t] * token_row(t)[i];
        o[i] = static_cast<float>(acc / sum);
      }
    }
  }
}

}  // namespace kimi::kernels::ref
