// KDA with AVX2+FMA. The recurrence is independent per column of S (per value dimension), so
// the recurrent kernel walks S in blocks of 32 columns and runs every token over one block
// while it sits in L1 (128 rows × 32 columns = 16 KiB). The chunked kernel is kda_chunk.h
// on GemmF32 (gemm_f32_avx2.cc) with vectorised primitives.
#include <algorithm>
#include <cmath>

#include "core/cpu_features.h"
#include "kernels/cpu/avx2/avx2.h"
#include "kernels/cpu/avx2/kda_ops_avx2.h"
#include "kernels/cpu/avx2/vec_math_avx2.h"
#include "kernels/cpu/kda_chunk.h"

namespace kimi::kernels::avx2 {
namespace {

constexpr int kColVecs = 4;  // 32 columns per block


// Where the next block of state columns lies, so that its lines are on their way while the
// current block is worked on: the next 32 columns of the same head, else the next head's first.
// nullptr after the last block.
inline const float* NextBlock(const KdaArgs& a, int64_t h, int64_t j0, int64_t width) {
  if (j0 + 2 * width <= a.dv) return a.state + h * a.dk * a.dv + j0 + width;
  if (h + 1 < a.H) return a.state + (h + 1) * a.dk * a.dv;
  return nullptr;
}

// Columns [j0, j0 + 8·NV) of one head for all tokens; decay holds exp(g) of every token of the
// head ([T, dk]). Per token two passes over the block: the first only reads S (the decayed
// state's product with k, recomputing e·S rather than storing it), the second writes
// S ← e·S + k uᵀ and reads out q·S. Both passes round exactly as a stored e·S would, so the
// result is the one of decaying in place first. While a block is worked on, the first pass
// prefetches the next block's rows (`next`), so the state streams from memory at the rate the
// rows are consumed instead of one miss per row.
template <int NV>
void RecurrentColumns(const KdaArgs& a, int64_t h, int64_t j0, const float* decay_all, const float* next) {
  const int64_t dk = a.dk, dv = a.dv;
  float* S = a.state + h * dk * dv + j0;
  for (int64_t t = 0; t < a.T; ++t) {
    const float* q = a.q + t * a.ld_qk + h * dk;
    const float* k = a.k + t * a.ld_qk + h * dk;
    const float* v = a.v + t * a.ld_v + h * dv + j0;
    const float* decay = decay_all + t * dk;
    __m256 acc[NV];
    for (int i = 0; i < NV; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t d = 0; d < dk; ++d) {
      if (t == 0 && next != nullptr) {
        _mm_prefetch(reinterpret_cast<const char*>(next + d * dv), _MM_HINT_T0);
        if (NV * 8 > 16) _mm_prefetch(reinterpret_cast<const char*>(next + d * dv + 16), _MM_HINT_T0);
      }
      const __m256 e = _mm256_set1_ps(decay[d]), kd = _mm256_set1_ps(k[d]);
      for (int i = 0; i < NV; ++i) {
        acc[i] = _mm256_fmadd_ps(kd, _mm256_mul_ps(_mm256_loadu_ps(S + d * dv + 8 * i), e), acc[i]);
      }
    }
    const __m256 beta = _mm256_set1_ps(a.beta[t * a.ld_beta + h]);
    __m256 u[NV], o[NV];
    for (int i = 0; i < NV; ++i) {
      u[i] = _mm256_mul_ps(beta, _mm256_sub_ps(_mm256_loadu_ps(v + 8 * i), acc[i]));
      o[i] = _mm256_setzero_ps();
    }
    for (int64_t d = 0; d < dk; ++d) {
      const __m256 e = _mm256_set1_ps(decay[d]), kd = _mm256_set1_ps(k[d]), qd = _mm256_set1_ps(q[d]);
      for (int i = 0; i < NV; ++i) {
        const __m256 decayed = _mm256_mul_ps(_mm256_loadu_ps(S + d * dv + 8 * i), e);
        const __m256 s = _mm256_fmadd_ps(kd, u[i], decayed);
        _mm256_storeu_ps(S + d * dv + 8 * i, s);
        o[i] = _mm256_fmadd_ps(qd, s, o[i]);
      }
    }
    float* out = a.out + t * a.ld_out + h * dv + j0;
    const __m256 scale = _mm256_set1_ps(a.scale);
    for (int i = 0; i < NV; ++i) _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(o[i], scale));
  }
}

// One column j of one head for all tokens (the dv % 8 tail).
void RecurrentColumn(const KdaArgs& a, int64_t h, int64_t j) {
  const int64_t dk = a.dk, dv = a.dv;
  float* S = a.state + h * dk * dv + j;
  for (int64_t t = 0; t < a.T; ++t) {
    const float* q = a.q + t * a.ld_qk + h * dk;
    const float* k = a.k + t * a.ld_qk + h * dk;
    const float* g = a.g + t * a.ld_qk + h * dk;
    float acc = 0.0f;
    for (int64_t d = 0; d < dk; ++d) {
      S[d * dv] *= std::exp(g[d]);
      acc += k[d] * S[d * dv];
    }
    const float u = a.beta[t * a.ld_beta + h] * (a.v[t * a.ld_v + h * dv + j] - acc);
    float o = 0.0f;
    for (int64_t d = 0; d < dk; ++d) {
      S[d * dv] += k[d] * u;
      o += q[d] * S[d * dv];
    }
    a.out[t * a.ld_out + h * dv + j] = a.scale * o;
  }
}

}  // namespace

void KdaRecurrent(const KdaArgs& a) {
  // exp(g) once per head and token, shared by every column block of the head.
  float* decay = ThreadScratchArray<float>(ScratchSlot::kA, a.T * a.dk);
  for (int64_t h = 0; h < a.H; ++h) {
    for (int64_t t = 0; t < a.T; ++t) ExpArray(a.g + t * a.ld_qk + h * a.dk, decay + t * a.dk, a.dk);
    int64_t j = 0;
    for (; j + 8 * kColVecs <= a.dv; j += 8 * kColVecs) {
      RecurrentColumns<kColVecs>(a, h, j, decay, NextBlock(a, h, j, 8 * kColVecs));
    }
    for (; j + 8 <= a.dv; j += 8) RecurrentColumns<1>(a, h, j, decay, nullptr);
    for (; j < a.dv; ++j) RecurrentColumn(a, h, j);
  }
}

void KdaChunkedForm256(const KdaArgs& a) { KdaChunkedHeads<Avx2Ops>(a); }

void KdaChunked(const KdaArgs& a) {
  if (cpu::HasAvx512F()) {
    KdaChunkedForm512(a);
  } else {
    KdaChunkedForm256(a);
  }
}

}  // namespace kimi::kernels::avx2
